// One contract for both media stores (local disk, S3-compatible bucket against s3rver on a free
// port), then the media service over each: signed URLs refused when altered, 410 once expired (the
// clock moved 7 days), the sweeper deleting the bytes of expired keys.
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LocalMediaStore, MEDIA_URL_LIFETIME_MS, MediaService, resolveRange, S3MediaStore, type MediaStore } from '../../../core/index.ts';
import { isGpufleetError } from '../../../model/index.ts';
import { startS3rver, type TestS3 } from './s3rver.ts';

let s3: TestS3;
let dir: string;
beforeAll(async () => {
  s3 = await startS3rver();
  dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-media-'));
});
afterAll(async () => {
  await s3?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const backends: [string, () => MediaStore][] = [
  ['local disk', () => new LocalMediaStore(path.join(dir, `store-${randomBytes(4).toString('hex')}`))],
  ['S3 (s3rver)', () => new S3MediaStore({ ...s3.config, prefix: `t-${randomBytes(4).toString('hex')}/` })],
];

async function readAll(s: NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of s) parts.push(Buffer.from(c as Buffer));
  return Buffer.concat(parts);
}

const key = (expiresS: number, ext = 'png') => `${expiresS}-${randomBytes(16).toString('hex')}.${ext}`;

async function refusal(p: Promise<unknown>): Promise<{ status: number; code: string }> {
  try {
    await p;
  } catch (e) {
    if (isGpufleetError(e)) return { status: e.status, code: e.code };
    throw e;
  }
  throw new Error('expected a refusal');
}

describe.each(backends)('the media store contract: %s', (_name, make) => {
  test('put, get (bytes and size), list, delete; a missing key is undefined; deleting it again is no error', async () => {
    const store = make();
    const bytes = randomBytes(70_000);
    const k = key(2_000_000_000);
    expect(await store.get(k)).toBeUndefined();
    await store.put(k, bytes, 'image/png');
    const got = await store.get(k);
    expect(got?.size).toBe(bytes.length);
    expect((await readAll(got!.body)).equals(bytes)).toBe(true);
    expect(await store.size(k)).toBe(bytes.length);
    expect(await store.size(key(2_000_000_000))).toBeUndefined();
    const part = await store.get(k, { start: 1000, end: 1999 });
    expect(part?.size).toBe(1000);
    expect((await readAll(part!.body)).equals(bytes.subarray(1000, 2000))).toBe(true);
    const tail = await store.get(k, { start: bytes.length - 1, end: bytes.length - 1 });
    expect((await readAll(tail!.body)).equals(bytes.subarray(-1))).toBe(true);
    const listed: string[] = [];
    for await (const x of store.list()) listed.push(x);
    expect(listed).toEqual([k]);
    await store.delete(k);
    expect(await store.get(k)).toBeUndefined();
    await store.delete(k);
    await store.close();
  });

  test('keys not made by the media service are refused before any I/O (no path from a caller string)', async () => {
    const store = make();
    for (const bad of ['../secret.key', 'a/b.png', '1-zz.png', `${key(1)}/..`, '']) await expect(store.put(bad, Buffer.from('x'), 'image/png'), bad).rejects.toThrow();
    await expect(store.get('../../etc/passwd')).rejects.toThrow();
    await store.close();
  });

  test('the media service: a signed URL serves, an altered one is 403, past 7 days it is 410 and the sweeper deletes the bytes', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const media = new MediaService({ store: make(), signingKey: randomBytes(32), origin: () => 'https://cp.example', clock: () => now });
    const png = Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), randomBytes(100)]);
    const saved = await media.save(png, 'image/png');
    expect(saved.expiresAt).toBe(now + MEDIA_URL_LIFETIME_MS);
    const url = new URL(saved.url);
    expect(url.origin).toBe('https://cp.example');
    const k = url.pathname.slice('/v2/media/'.length);
    expect(k).toBe(saved.key);
    expect(k).toMatch(new RegExp(`^${(now + MEDIA_URL_LIFETIME_MS) / 1000}-[0-9a-f]{32}\\.png$`));
    const sig = url.searchParams.get('signature')!;
    const opened = await media.open(k, sig);
    expect(opened.contentType).toBe('image/png');
    expect((await readAll(opened.body)).equals(png)).toBe(true);

    // altered: another signature, a signature's last character, another expiry, another extension, none at all
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const laterKey = k.replace(/^\d+/, String(Number(k.split('-')[0]) + 86_400));
    for (const [k2, s2] of [
      [k, flip(sig, 0)],
      [k, flip(sig, sig.length - 1)],
      [laterKey, sig],
      [k.replace(/\.png$/, '.gif'), sig],
      [k, undefined],
      [k, sig + 'A'],
    ] as const)
      expect(await refusal(media.open(k2, s2)), `${k2} ${s2}`).toEqual({ status: 403, code: 'FORBIDDEN' });
    expect(await refusal(media.open('../../secret.key', sig))).toMatchObject({ status: 404 });

    // one second before the expiry it still serves; at the expiry it is 410, whatever the sweeper did
    now = saved.expiresAt - 1000;
    (await media.open(k, sig)).body.destroy();
    expect(await media.sweep()).toBe(0);
    now = saved.expiresAt;
    expect(await refusal(media.open(k, sig))).toEqual({ status: 410, code: 'MEDIA_EXPIRED' });
    const young = await media.save(png, 'image/png');
    expect(await media.sweep()).toBe(1);
    expect(await media.store.get(k)).toBeUndefined();
    expect(await media.store.size(young.key)).toBe(png.length);
    await media.close();
  });
});

test('local disk: the directory is 0700, objects 0600, and a failed write leaves no temporary file', async () => {
  const d = path.join(dir, 'modes');
  const store = new LocalMediaStore(d);
  const k = key(2_000_000_000, 'wav');
  await store.put(k, Buffer.from('RIFF'), 'audio/wav');
  expect((await stat(d)).mode & 0o777).toBe(0o700);
  expect((await stat(path.join(d, k))).mode & 0o777).toBe(0o600);
  expect(await readdir(d)).toEqual([k]);
});

test('Range headers: one range is served, anything else means the whole object; past the end is 416', async () => {
  expect(resolveRange(undefined, 100)).toBeUndefined();
  expect(resolveRange('bytes=0-9', 100)).toEqual({ start: 0, end: 9 });
  expect(resolveRange('bytes=90-', 100)).toEqual({ start: 90, end: 99 });
  expect(resolveRange('bytes=90-500', 100)).toEqual({ start: 90, end: 99 });
  expect(resolveRange('bytes=-10', 100)).toEqual({ start: 90, end: 99 });
  expect(resolveRange('bytes=-1000', 100)).toEqual({ start: 0, end: 99 });
  for (const ignored of ['bytes=0-1,5-6', 'bytes=9-2', 'items=0-1', 'bytes=-', 'bytes=x-1']) expect(resolveRange(ignored, 100), ignored).toBeUndefined();
  for (const past of ['bytes=100-', 'bytes=100-200', 'bytes=-0']) {
    const r = await refusal(Promise.resolve().then(() => resolveRange(past, 100)));
    expect(r, past).toEqual({ status: 416, code: 'RANGE_NOT_SATISFIABLE' });
  }
});
