// Registry credentials: the password goes in once and never comes out: not in any response body, not
// in plaintext in the data directory (on PostgreSQL: nor in any table row or file of the database),
// not in the logs (captured at trace level). Only RegistryService.credentials() opens it, for the
// provisioner.
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { SecretBox } from '../../store/base/secret-box.ts';
import { databaseLeaks, databaseRows } from '../harness/database-at-rest.ts';

type J = any;
const H100 = 'NVIDIA H100 80GB HBM3';
const PASSWORD = 'hunter2-Sup3rSecret-registry-pw';
const ROTATED = 'rotated-0ther-Secret-pw-9876';

let cp: TestControlPlane;
let dataDir: string;
let logs = '';
const bodies: string[] = [];
let alice: { accountId: string; key: string };
let bob: { accountId: string; key: string };

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-reg-'));
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      logs += chunk.toString();
      cb();
    },
  });
  cp = await startTestControlPlane({ dataDir, logger: pino({ level: 'trace' }, sink) });
  await seedHosts(cp.services.store, [{ gpus: 8 }]);
  alice = await cp.newAccount();
  bob = await cp.newAccount();
});
afterAll(async () => {
  await cp?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** Every response body is kept so the last test can look for the password in all of them. */
async function call(key: string, method: string, p: string, json?: unknown): Promise<{ status: number; body: J }> {
  const res = await cp.api(p, { method, key, ...(json !== undefined ? { json } : {}) });
  const text = await res.text();
  bodies.push(text);
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

let regId = '';

test('create answers {id, name} only', async () => {
  const r = await call(alice.key, 'POST', '/v2/registries', { name: 'ghcr', username: 'alice', password: PASSWORD });
  expect(r.status).toBe(201);
  expect(Object.keys(r.body).sort()).toEqual(['id', 'name']);
  expect(r.body.name).toBe('ghcr');
  regId = r.body.id;
  expect((await cp.services.registries.credentials(alice.accountId, regId)).password).toBe(PASSWORD);
});

test('validation: 422 with errors, 409 on a duplicate name', async () => {
  const missing = await call(alice.key, 'POST', '/v2/registries', { name: 'x', username: 'u' });
  expect(missing.status).toBe(422);
  expect(missing.body.errors).toEqual(['$.password: is required']);
  const unknown = await call(alice.key, 'POST', '/v2/registries', { name: 'x', username: 'u', password: PASSWORD, server: 'ghcr.io' });
  expect(unknown.status).toBe(422);
  expect(unknown.body.errors).toEqual(['$.server: unknown property']);
  const dup = await call(alice.key, 'POST', '/v2/registries', { name: 'ghcr', username: 'u', password: PASSWORD });
  expect(dup.status).toBe(409);
  const emptyPatch = await call(alice.key, 'PATCH', `/v2/registries/${regId}`, {});
  expect(emptyPatch.status).toBe(422);
});

// issue 18, item 7: both reach `docker login` on a host; a control character there was a 201 and a pod that failed later
test('a username or password with NUL or another control character is 422 on create and update (REST and GraphQL), and nothing is stored', async () => {
  const before = (await call(alice.key, 'GET', '/v2/registries')).body.registries.length;
  for (const [field, value] of [
    ['username', 'ali\u0000ce'],
    ['username', 'alice\n'],
    ['username', 'al\tice'],
    ['username', 'alice\u001b[2J'],
    ['username', 'alice\u0085'],
    ['password', `${PASSWORD}\u0000`],
    ['password', `\u0007${PASSWORD}`],
    ['password', `${PASSWORD}\u007f`],
    ['password', `${PASSWORD}\ud800`],
  ] as const) {
    const body = { name: `ctl-${field}`, username: 'alice', password: PASSWORD, [field]: value };
    const created = await call(alice.key, 'POST', '/v2/registries', body);
    expect(created.status, `${field} ${JSON.stringify(value)}`).toBe(422);
    expect(created.body.errors, JSON.stringify(value)).toEqual([`$.${field}: ${field === 'username' ? 'must not contain control characters or an unpaired surrogate' : 'must not contain control characters (tab and line breaks aside) or an unpaired surrogate'}`]);
    const patched = await call(alice.key, 'PATCH', `/v2/registries/${regId}`, { [field]: value });
    expect(patched.status, `PATCH ${field} ${JSON.stringify(value)}`).toBe(422);
  }
  const gql = await cp.api('/graphql', {
    method: 'POST',
    key: alice.key,
    json: { query: 'mutation($i: SaveRegistryAuthInput!) { saveRegistryAuth(input: $i) { id } }', variables: { i: { name: 'gql-ctl', username: 'a\u0000b', password: PASSWORD } } },
  });
  const gqlBody = (await gql.json()) as J;
  expect(gqlBody.errors?.[0]?.extensions?.code, JSON.stringify(gqlBody)).toBe('VALIDATION_FAILED');
  expect((await call(alice.key, 'GET', '/v2/registries')).body.registries.length).toBe(before);
  expect((await cp.services.registries.credentials(alice.accountId, regId)).password).toBe(PASSWORD);
  // a JSON key file (GCR's `_json_key`) keeps its line breaks and tabs
  const jsonKey = '{\n\t"type": "service_account",\r\n\t"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIE\\n"\n}\n';
  const keyFile = await call(alice.key, 'POST', '/v2/registries', { name: 'gcr-json-key', username: '_json_key', password: jsonKey });
  expect(keyFile.status, JSON.stringify(keyFile.body)).toBe(201);
  expect((await cp.services.registries.credentials(alice.accountId, keyFile.body.id)).password).toBe(jsonKey);
  expect((await call(alice.key, 'DELETE', `/v2/registries/${keyFile.body.id}`)).status).toBe(204);
});

test('get, list and update never return the password; update rotates it', async () => {
  const get = await call(alice.key, 'GET', `/v2/registries/${regId}`);
  expect(get.body).toEqual({ id: regId, name: 'ghcr' });
  const list = await call(alice.key, 'GET', '/v2/registries');
  expect(list.body).toEqual({ registries: [{ id: regId, name: 'ghcr' }] });
  const upd = await call(alice.key, 'PATCH', `/v2/registries/${regId}`, { password: ROTATED, username: 'alice2' });
  expect(upd.status).toBe(200);
  expect(upd.body).toEqual({ id: regId, name: 'ghcr' });
  expect(await cp.services.registries.credentials(alice.accountId, regId)).toEqual({ username: 'alice2', password: ROTATED });
});

test('another account gets 404 and cannot pull with the credential', async () => {
  expect((await call(bob.key, 'GET', `/v2/registries/${regId}`)).status).toBe(404);
  expect((await call(bob.key, 'PATCH', `/v2/registries/${regId}`, { password: 'x' })).status).toBe(404);
  expect((await call(bob.key, 'DELETE', `/v2/registries/${regId}`)).status).toBe(404);
  expect((await call(bob.key, 'GET', '/v2/registries')).body).toEqual({ registries: [] });
  await expect(cp.services.registries.credentials(bob.accountId, regId)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  const pod = await call(bob.key, 'POST', '/v2/pods', { name: 'p', image: 'private/img', gpu: { id: H100 }, registry: regId });
  expect(pod.status).toBe(422);
});

test('delete is refused while a live pod or a template uses the credential', async () => {
  const pod = await call(alice.key, 'POST', '/v2/pods', { name: 'private-pod', image: 'ghcr.io/a/b', gpu: { id: H100 }, registry: regId });
  expect(pod.status, JSON.stringify(pod.body)).toBe(201);
  expect(pod.body.registry).toBe(regId);
  const busy = await call(alice.key, 'DELETE', `/v2/registries/${regId}`);
  expect(busy.status).toBe(409);
  expect(busy.body.code).toBe('IN_USE');
  expect((await call(alice.key, 'DELETE', `/v2/pods/${pod.body.id}`)).status).toBe(204);

  const tpl = await call(alice.key, 'POST', '/v2/templates', { name: 'private-tpl', image: 'ghcr.io/a/b', registry: regId });
  expect(tpl.status).toBe(201);
  expect((await call(alice.key, 'DELETE', `/v2/registries/${regId}`)).status).toBe(409);
  expect((await call(alice.key, 'PATCH', `/v2/templates/${tpl.body.id}`, { registry: null })).status).toBe(200);
  expect((await call(alice.key, 'DELETE', `/v2/registries/${regId}`)).status).toBe(204);
  expect((await call(alice.key, 'GET', `/v2/registries/${regId}`)).status).toBe(404);
});

test('the password is in no response body, no log line, and no data file (or database row) in plaintext', async () => {
  // one more credential that stays stored until the data directory is read
  const kept = await call(alice.key, 'POST', '/v2/registries', { name: 'kept', username: 'u', password: PASSWORD });
  expect(kept.status).toBe(201);
  for (const b of bodies) {
    expect(b).not.toContain(PASSWORD);
    expect(b).not.toContain(ROTATED);
  }
  expect(logs).toContain('/v2/registries'); // the capture works: requests were logged
  expect(logs).not.toContain(PASSWORD);
  expect(logs).not.toContain(ROTATED);

  const databaseUrl = cp.services.config.databaseUrl;
  await cp.close(); // flushes the store's snapshot as well as the journal
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else files.push(p);
    }
  };
  await walk(dataDir);
  let sawCiphertext = false;
  for (const f of files) {
    const text = (await readFile(f)).toString('latin1');
    expect(text, f).not.toContain(PASSWORD);
    expect(text, f).not.toContain(ROTATED);
    if (text.includes('passwordEnc')) sawCiphertext = true;
  }
  if (databaseUrl) {
    // PostgreSQL: the registries are rows, sealed as in the embedded files, and the key is
    // GPUFLEET_SECRET_KEY, in no file here
    expect(await databaseLeaks(databaseUrl, [PASSWORD, ROTATED])).toEqual([]);
    if ((await databaseRows(databaseUrl)).some((r) => r.includes('passwordEnc'))) sawCiphertext = true;
    expect(files.some((f) => path.basename(f) === 'secret.key')).toBe(false);
  } else {
    expect(files.length).toBeGreaterThan(1);
    const key = await stat(path.join(dataDir, 'secret.key'));
    expect(key.mode & 0o777).toBe(0o600);
    expect(key.size).toBe(32);
  }
  expect(sawCiphertext).toBe(true);
});

test('SecretBox: fresh nonce per seal, bound to its context, tamper-evident', () => {
  const box = SecretBox.fromKey(randomBytes(32));
  const a = box.seal('pw', 'reg_1');
  expect(a).not.toBe(box.seal('pw', 'reg_1'));
  expect(box.open(a, 'reg_1')).toBe('pw');
  expect(() => box.open(a, 'reg_2')).toThrow(/cannot be decrypted/);
  expect(() => SecretBox.fromKey(randomBytes(32)).open(a, 'reg_1')).toThrow(/cannot be decrypted/);
  // the second-to-last character changed to another one (it was compared with the last before, so an
  // 'A' there stayed 'A' one run in 64 and the "tampered" text was the sealed one)
  const at = a.length - 2;
  const flipped = a.slice(0, at) + (a[at] === 'A' ? 'B' : 'A') + a.slice(at + 1);
  expect(flipped).not.toBe(a);
  expect(() => box.open(flipped, 'reg_1')).toThrow();
  expect(() => box.open('garbage', 'reg_1')).toThrow(/malformed/);
});

test('SecretBox.load creates the key once and reuses it', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-box-'));
  try {
    const first = await SecretBox.load(dir);
    const sealed = first.seal('again');
    const second = await SecretBox.load(dir);
    expect(second.open(sealed)).toBe('again');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
