// Issue 8, item 9 and its "done means": nothing in the data directory holds an API key, a registry
// password or an env value in clear text, and the directory is private (0700, files 0600). Env values
// are sealed at the persistence boundary, so the owner's own views still show them (spec: env is
// part of the owner's pod view) while another account sees nothing. On PostgreSQL the state at rest
// is the database as well: no table row and none of its files on the server's disk holds them.
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startControlPlane } from '../../api/index.ts';
import { parseQuotas } from '../../api/rate-limit/limiter.ts';
import { LowdbStore } from '../../store/embedded/lowdb-store.ts';
import { formatRecord } from '../../store/embedded/journal-format.ts';
import { ADMIN_KEY, startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { itEmbeddedOnly } from '../harness/embedded-only.ts';
import { databaseLeaks, databaseRows } from '../harness/database-at-rest.ts';
import { TEST_STORE } from '../harness/test-store.ts';
import { seedHosts } from '../harness/fake-hosts.ts';

type J = any;
const H100 = 'NVIDIA H100 80GB HBM3';
// distinctive values: any of them found in a data file is a leak
const POD_ENV = 'pod-env-VALUE-7f3a9c1e';
const POD_ENV_PATCHED = 'pod-env-PATCHED-0b5d2e88';
const TPL_ENV = 'template-env-VALUE-c41d7a02';
const EP_ENV = 'endpoint-env-VALUE-9e6b3f57';
const REG_PASSWORD = 'registry-PASSWORD-5a8e1d3c';

/** every regular file under `dir` */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else out.push(p);
  }
  return out;
}

/** the files under `dir` that contain any of `secrets`, as `file: secret` */
async function leaks(dir: string, secrets: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const f of await filesUnder(dir)) {
    const text = (await readFile(f)).toString('latin1');
    for (const s of secrets) if (text.includes(s)) found.push(`${path.relative(dir, f)}: ${s}`);
  }
  return found;
}

async function modeOf(p: string): Promise<string> {
  return ((await stat(p)).mode & 0o777).toString(8);
}

describe('through a listening control plane', () => {
  let cp: TestControlPlane;
  let dataDir: string;
  let alice: { accountId: string; key: string };
  let bob: { accountId: string; key: string };
  const ids = { pod: '', template: '', endpoint: '', registry: '' };

  async function call(key: string, method: string, p: string, json?: unknown): Promise<{ status: number; body: J }> {
    const res = await cp.api(p, { method, key, ...(json !== undefined ? { json } : {}) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  }

  const secrets = () => [POD_ENV, POD_ENV_PATCHED, TPL_ENV, EP_ENV, REG_PASSWORD, alice.key, bob.key, ADMIN_KEY];
  /** the database on PostgreSQL; undefined on the embedded store */
  let databaseUrl: string | undefined;

  /** the state at rest that holds any secret in clear: the data directory's files, and the database's rows and files */
  async function leaksAtRest(): Promise<string[]> {
    return [...(await leaks(dataDir, secrets())), ...(databaseUrl ? await databaseLeaks(databaseUrl, secrets()) : [])];
  }

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-at-rest-'));
    cp = await startTestControlPlane({ dataDir });
    databaseUrl = cp.services.config.databaseUrl;
    expect(databaseUrl !== undefined).toBe(TEST_STORE === 'postgres');
    await seedHosts(cp.services.store, [{ gpus: 8 }, { id: 'cpu-host', gpus: 0, cpuCount: 64, memoryGb: 256 }]);
    alice = await cp.newAccount();
    bob = await cp.newAccount();

    const reg = await call(alice.key, 'POST', '/v2/registries', { name: 'private', username: 'alice', password: REG_PASSWORD });
    expect(reg.status, JSON.stringify(reg.body)).toBe(201);
    ids.registry = reg.body.id;
    const tpl = await call(alice.key, 'POST', '/v2/templates', { name: 'worker', image: 'worker:1', serverless: true, env: { TPL_TOKEN: TPL_ENV } });
    expect(tpl.status, JSON.stringify(tpl.body)).toBe(201);
    ids.template = tpl.body.id;
    const pod = await call(alice.key, 'POST', '/v2/pods', {
      name: 'secretive',
      image: 'busybox:1.36',
      disk: 1,
      cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 },
      env: { POD_TOKEN: POD_ENV },
    });
    expect(pod.status, JSON.stringify(pod.body)).toBe(201);
    ids.pod = pod.body.id;
    const ep = await call(alice.key, 'POST', '/v1/endpoints', { name: 'ep', templateId: ids.template, gpuTypeIds: [H100], env: { EP_TOKEN: EP_ENV } });
    expect(ep.status, JSON.stringify(ep.body)).toBe(200);
    ids.endpoint = ep.body.id;
    // an update: the journal gets a second version of the pod
    const patched = await call(alice.key, 'PATCH', `/v2/pods/${ids.pod}`, { env: { POD_TOKEN: POD_ENV, POD_TOKEN_2: POD_ENV_PATCHED } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  });
  afterAll(async () => {
    await cp?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('the owner sees env values in their own pod, template and endpoint views; another account sees none of them', async () => {
    const pod = await call(alice.key, 'GET', `/v2/pods/${ids.pod}`);
    expect(pod.status).toBe(200);
    expect(pod.body.env).toEqual({ POD_TOKEN: POD_ENV, POD_TOKEN_2: POD_ENV_PATCHED });
    expect((await call(alice.key, 'GET', `/v2/templates/${ids.template}`)).body.env).toEqual({ TPL_TOKEN: TPL_ENV });
    expect((await call(alice.key, 'GET', `/v1/endpoints/${ids.endpoint}`)).body.env).toEqual({ EP_TOKEN: EP_ENV });

    const seenByBob: string[] = [];
    for (const p of [`/v2/pods/${ids.pod}`, '/v2/pods', `/v2/templates/${ids.template}`, '/v2/templates', `/v1/endpoints/${ids.endpoint}`, '/v1/endpoints']) {
      const r = await cp.api(p, { key: bob.key });
      seenByBob.push(`${p} ${r.status} ${await r.text()}`);
    }
    expect(seenByBob[0]).toMatch(/^\S+ 404 /);
    for (const s of seenByBob) for (const v of [POD_ENV, POD_ENV_PATCHED, TPL_ENV, EP_ENV]) expect(s).not.toContain(v);
  });

  test('nothing at rest holds an env value, a registry password or an API key in clear: as written, the whole state, after close', async () => {
    // 1. as written (the embedded store's journal, before its timed snapshot; the database's rows and files)
    expect(await leaksAtRest()).toEqual([]);
    // 2. the whole state: the embedded store's snapshot, or every row of the database
    let state: string;
    if (databaseUrl) state = (await databaseRows(databaseUrl)).join('\n');
    else {
      await (cp.services.store as LowdbStore).snapshot();
      state = await readFile(path.join(dataDir, 'gpufleet.json'), 'utf8');
    }
    expect(state).toContain(ids.pod); // the records are there, their secrets sealed
    expect(state).toContain('"$sealed"');
    expect(state).toContain(createHash('sha256').update(alice.key).digest('hex')); // keys: the hash only
    expect(await leaksAtRest()).toEqual([]);
    // 3. a write after it, then a clean close (the embedded store's final snapshot)
    expect((await call(alice.key, 'POST', `/v2/pods/${ids.pod}/action`, { action: 'stop' })).status).toBe(200);
    expect(await leaksAtRest()).toEqual([]);
    await cp.close();
    expect(await leaksAtRest()).toEqual([]);

    // the sealed values open again after a restart on the same directory (and database)
    cp = await startTestControlPlane({ dataDir });
    expect(cp.services.config.databaseUrl).toBe(databaseUrl);
    expect((await call(alice.key, 'GET', `/v2/pods/${ids.pod}`)).body.env).toEqual({ POD_TOKEN: POD_ENV, POD_TOKEN_2: POD_ENV_PATCHED });
    expect(await leaksAtRest()).toEqual([]);
  });

  // the embedded store's files and their modes; on PostgreSQL the data directory holds none of the
  // store (the key is GPUFLEET_SECRET_KEY, the state is in the database, whose files the server owns)
  itEmbeddedOnly('the data directory is 0700 and every file in it 0600', async () => {
    // a write, so a journal segment exists beside the snapshot and the key
    expect((await call(alice.key, 'PATCH', `/v2/pods/${ids.pod}`, { name: 'renamed' })).status).toBe(200);
    expect(await modeOf(dataDir)).toBe('700');
    expect(await modeOf(path.join(dataDir, 'journal'))).toBe('700');
    const files = await filesUnder(dataDir);
    expect(files.map((f) => path.relative(dataDir, f))).toEqual(expect.arrayContaining(['gpufleet.json', 'secret.key']));
    expect(files.some((f) => f.endsWith('.jsonl'))).toBe(true);
    for (const f of files) expect(`${path.relative(dataDir, f)} ${await modeOf(f)}`).toBe(`${path.relative(dataDir, f)} 600`);
  });
});

test('files and folders left readable by others are made private at start', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-modes-'));
  try {
    const s = await LowdbStore.open({ dir, snapshotIntervalMs: 3_600_000 });
    await s.transact((tx) => tx.put('accounts', { id: 'a', email: 'a@x', name: 'a', operator: false, balance: 0, pubKey: '', createdAt: 'x' }));
    await s.close();
    // what a restored backup or an older version may leave: everything readable by others
    await writeFile(path.join(dir, 'journal', '000000000001.jsonl.corrupt'), 'set aside by a repair');
    for (const f of ['gpufleet.json', 'secret.key', 'journal/000000000001.jsonl.corrupt']) await chmod(path.join(dir, f), 0o644);
    await chmod(path.join(dir, 'journal'), 0o755);
    await chmod(dir, 0o755);

    const notices: string[] = [];
    const again = await LowdbStore.open({ dir, onNotice: (m) => notices.push(m) });
    try {
      expect(await modeOf(dir)).toBe('700');
      expect(await modeOf(path.join(dir, 'journal'))).toBe('700');
      for (const f of ['gpufleet.json', 'secret.key', 'journal/000000000001.jsonl.corrupt']) expect(await modeOf(path.join(dir, f))).toBe('600');
      expect(notices.join('\n')).toContain('secret.key');
    } finally {
      await again.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('env values stored in clear by an earlier version are sealed at the next start and still read', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-legacy-env-'));
  try {
    // an earlier version's files: the snapshot and a journal line with env in clear
    const pod = { id: 'pod_old', accountId: 'acct_1', name: 'old', env: { OLD: POD_ENV } };
    const template = { id: 'tpl_old', accountId: 'acct_1', name: 'old', env: { OLD: TPL_ENV } };
    await mkdir(path.join(dir, 'journal'), { recursive: true });
    await writeFile(path.join(dir, 'gpufleet.json'), JSON.stringify({ seq: 1, collections: { pods: { pod_old: pod } } }));
    await writeFile(path.join(dir, 'journal', '000000000002.jsonl'), JSON.stringify({ seq: 2, ops: [{ c: 'templates', id: 'tpl_old', v: template }] }) + '\n');
    const s = await LowdbStore.open({ dir, onNotice: () => undefined });
    try {
      expect((await s.get('pods', 'pod_old'))?.env).toEqual({ OLD: POD_ENV });
      expect((await s.get('templates', 'tpl_old'))?.env).toEqual({ OLD: TPL_ENV });
      expect(await leaks(dir, [POD_ENV, TPL_ENV])).toEqual([]);
    } finally {
      await s.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a sealed env value copied into another record does not open there', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-sealed-copy-'));
  try {
    const s = await LowdbStore.open({ dir, snapshotIntervalMs: 3_600_000 });
    const base = { accountId: 'acct_1', name: 'p' };
    await s.transact((tx) => tx.put('pods', { ...base, id: 'pod_a', env: { K: POD_ENV } } as never));
    await s.close();
    const snap = JSON.parse(await readFile(path.join(dir, 'gpufleet.json'), 'utf8'));
    const sealed = snap.collections.pods.pod_a.$sealed;
    // another record carrying pod_a's ciphertext, as a tampered journal line
    await writeFile(path.join(dir, 'journal', '000000000002.jsonl'), formatRecord({ seq: 2, ops: [{ c: 'pods', id: 'pod_b', v: { ...base, id: 'pod_b', $sealed: sealed } }] }));
    await expect(LowdbStore.open({ dir, onNotice: () => undefined })).rejects.toMatchObject({ fields: { collection: 'pods', id: 'pod_b', field: 'env' } });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

describe('GPUFLEET_BOOTSTRAP_KEY shorter than 32 characters', () => {
  async function start(bootstrapKey: string): Promise<{ logs: string; status: number }> {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-bootstrap-'));
    let logs = '';
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        logs += chunk.toString();
        cb();
      },
    });
    const cp = await startControlPlane(
      {
        port: 0,
        host: '127.0.0.1',
        dataDir,
        bootstrapKey,
        rateLimits: parseQuotas(undefined),
        provisioner: false,
        reconcileIntervalMs: 500,
        metricsIntervalMs: 10_000,
        logLevel: 'info',
      },
      { logger: pino({ level: 'info' }, sink) },
    );
    try {
      const res = await fetch(`${cp.url}/v2/keys`, { headers: { authorization: `Bearer ${bootstrapKey}` } });
      return { logs, status: res.status };
    } finally {
      await cp.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }

  test('a short key is warned about in the log, never shown, and still created exactly as given', async () => {
    const short = 'short-Bootstrap-9x'; // 18 characters
    const { logs, status } = await start(short);
    expect(status).toBe(200);
    const warning = logs.split('\n').find((l) => l.includes('GPUFLEET_BOOTSTRAP_KEY'));
    expect(warning).toBeDefined();
    expect(JSON.parse(warning!)).toMatchObject({ level: 40 });
    expect(warning).toContain('18 characters');
    expect(logs).not.toContain(short);
  });

  test('a key of 32 characters or more draws no warning', async () => {
    const { logs, status } = await start('long-enough-Bootstrap-key-0123456789');
    expect(status).toBe(200);
    expect(logs).not.toContain('GPUFLEET_BOOTSTRAP_KEY');
  });
});

test('a data directory whose secret.key is missing is refused, and no new key is left in its place', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-no-key-'));
  try {
    const s = await LowdbStore.open({ dir });
    await s.transact((tx) => tx.put('pods', { id: 'pod_a', accountId: 'acct_1', name: 'p', env: { K: POD_ENV } } as never));
    await s.close();
    await rm(path.join(dir, 'secret.key'));
    await expect(LowdbStore.open({ dir, onNotice: () => undefined })).rejects.toMatchObject({ fields: { collection: 'pods', id: 'pod_a' } });
    // a fresh key would open nothing and hide that the original must be restored
    await expect(stat(path.join(dir, 'secret.key'))).rejects.toMatchObject({ code: 'ENOENT' });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
