import { expect, test } from 'vitest';
import type { HostRecord } from '../../../model/records/host.ts';
import { imagesRefusedTo, withPulledImage } from '../../../model/records/private-images.ts';

const X = `sha256:${'a'.repeat(64)}`;
const Y = `sha256:${'b'.repeat(64)}`;
const host = { id: 'h1' } as HostRecord;

test('an image pulled with credentials is refused to every other account until it pulls it itself', () => {
  const h1 = withPulledImage(host, X, 'alice', true)!;
  expect(imagesRefusedTo(h1, 'alice')).toEqual([]);
  expect(imagesRefusedTo(h1, 'bob')).toEqual([X]);
  const h2 = withPulledImage(h1, X, 'bob', true)!;
  expect(imagesRefusedTo(h2, 'bob')).toEqual([]);
  expect(imagesRefusedTo(h2, 'carol')).toEqual([X]);
  expect(h2.privateImages).toEqual([{ imageId: X, accountIds: ['alice', 'bob'] }]);
});

test('an anonymous pull records nothing new, but admits an account to an image it could read anonymously', () => {
  expect(withPulledImage(host, Y, 'bob', false)).toBeNull();
  const h1 = withPulledImage(host, X, 'alice', true)!;
  expect(imagesRefusedTo(withPulledImage(h1, X, 'bob', false)!, 'bob')).toEqual([]);
});

test('a repeated pull or a malformed image id changes nothing', () => {
  const h1 = withPulledImage(host, X, 'alice', true)!;
  expect(withPulledImage(h1, X, 'alice', true)).toBeNull();
  expect(withPulledImage(host, 'sha256:zz; rm -rf /', 'alice', true)).toBeNull();
  expect(imagesRefusedTo(host, 'anyone')).toEqual([]);
});
