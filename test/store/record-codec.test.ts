// The persistence boundary (store/base/record-codec.ts): env goes to disk sealed and comes back as it
// was; a version that leaves env as it was keeps its ciphertext, one that changes it is sealed anew.
import { randomBytes } from 'node:crypto';
import { expect, test } from 'vitest';
import { RecordCodec } from '../../store/base/record-codec.ts';
import { SecretBox } from '../../store/base/secret-box.ts';

const codec = () => new RecordCodec(SecretBox.fromKey(randomBytes(32)));

test('env is sealed on the way to disk and opened on the way back; other collections pass through', () => {
  const c = codec();
  const pod = { id: 'pod_1', name: 'p', env: { TOKEN: 'clear-value-123' } };
  const stored = c.encode('pods', pod);
  expect(JSON.stringify(stored)).not.toContain('clear-value-123');
  expect(stored).not.toHaveProperty('env');
  expect(stored.name).toBe('p');
  expect(c.decode('pods', JSON.parse(JSON.stringify(stored)), 'test')).toEqual({ rec: pod, clear: false });
  const account = { id: 'acct_1', email: 'a@x' };
  expect(c.encode('accounts', account)).toBe(account);
});

test('a new version with the same env reuses the ciphertext; a changed env is sealed anew', () => {
  const c = codec();
  const v1 = Object.freeze({ id: 'pod_1', status: 'RUNNING', env: { A: '1' } });
  const s1 = c.encode('pods', v1);
  const v2 = Object.freeze({ ...v1, status: 'EXITED', env: { A: '1' } });
  expect(c.encode('pods', v2, v1).$sealed).toEqual(s1.$sealed);
  const v3 = Object.freeze({ ...v2, env: { A: '2' } });
  const s3 = c.encode('pods', v3, v2);
  expect(s3.$sealed).not.toEqual(s1.$sealed);
  expect(c.decode('pods', s3, 'test').rec.env).toEqual({ A: '2' });
  // the same record again (a snapshot): the ciphertext it was written with
  expect(c.encode('pods', v3)).toBe(s3);
});
