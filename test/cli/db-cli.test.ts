// `gpufleet db migrate` and `gpufleet db import --from <data dir>`, run as the real CLI: an embedded
// store's accounts, keys, templates and pods (env values sealed) move into PostgreSQL, checked by
// counts, and a control plane on the database then serves them with the same keys and env values.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REPO_ROOT, startTestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { startPostgres, type TestPostgres } from '../harness/postgres.ts';
import type { PgStore } from '../../store/index.ts';

const run = promisify(execFile);

async function gpufleet(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [path.join(REPO_ROOT, 'bin/gpufleet.js'), ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 60_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : 1, stdout: x.stdout ?? '', stderr: x.stderr ?? '' };
  }
}

let cluster: TestPostgres;
beforeAll(async () => {
  cluster = await startPostgres();
}, 120_000);
afterAll(async () => cluster?.stop());

it('db import moves an embedded store into PostgreSQL, checked by counts; a replica on it serves the same keys, pods and env values', async () => {
  // the embedded store, whatever store the suite runs on
  const dataDir = await mkdtemp(path.join(tmpdir(), 'gf-db-import-'));
  const embedded = await startTestControlPlane({ dataDir, config: { databaseUrl: undefined } });
  let podId: string;
  let userKey: string;
  try {
    await seedHosts(embedded.services.store, [{ gpus: 2 }]);
    const user = await embedded.newAccount('read_write', 50);
    userKey = user.key;
    const t = await embedded.api('/v2/templates', { method: 'POST', key: userKey, json: { name: 'tpl', image: 'img', env: { A: '1' } } });
    expect(t.status).toBe(201);
    const p = await embedded.api('/v2/pods', { method: 'POST', key: userKey, json: { name: 'p1', image: 'img', disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3' }, env: { SECRET: 'sealed-at-rest' } } });
    expect(p.status).toBe(201);
    podId = ((await p.json()) as { id: string }).id;
  } finally {
    await embedded.close();
  }
  const key = await readFile(path.join(dataDir, 'secret.key'));
  const url = await cluster.createDatabase();
  const env = { GPUFLEET_DATABASE_URL: url, GPUFLEET_SECRET_KEY: key.toString('base64') };
  try {
    expect(await gpufleet(['db', 'migrate'], env)).toMatchObject({ code: 0, stdout: expect.stringMatching(/schema version \d+/) });
    // a key other than the data directory's would leave its sealed secrets unopenable
    const wrongKey = await gpufleet(['db', 'import', '--from', dataDir], { ...env, GPUFLEET_SECRET_KEY: Buffer.alloc(32, 1).toString('base64') });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toMatch(/differs from GPUFLEET_SECRET_KEY/);
    const imported = await gpufleet(['db', 'import', '--from', dataDir, '--json'], env);
    expect(imported.code, imported.stderr).toBe(0);
    const counts = (JSON.parse(imported.stdout) as { counts: { collection: string; source: number; imported: number; inDatabase: number }[] }).counts;
    const of = (c: string) => counts.find((x) => x.collection === c);
    expect(of('pods')).toEqual({ collection: 'pods', source: 1, imported: 1, inDatabase: 1 });
    expect(of('templates')).toMatchObject({ source: 1, imported: 1 });
    expect(of('apiKeys')!.source).toBe(2);
    expect(of('hosts')).toMatchObject({ source: 1, imported: 1 });
    // once is enough: a database that holds records is refused unless told to merge
    const twice = await gpufleet(['db', 'import', '--from', dataDir], env);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/already holds records/);

    const replica = await startTestControlPlane({ config: { databaseUrl: url, secretKey: key } });
    try {
      const pod = (await (await replica.api(`/v2/pods/${podId}`, { key: userKey })).json()) as { env: Record<string, string> };
      expect(pod.env).toEqual({ SECRET: 'sealed-at-rest' });
      const { rows } = await (replica.services.store as PgStore).pool.query<{ n: number }>('SELECT count(*)::int AS n FROM gf_gpu_claims');
      expect(rows[0]?.n).toBe(1);
      const raw = await (replica.services.store as PgStore).pool.query<{ data: string }>('SELECT data::text AS data FROM gf_pods');
      expect(raw.rows[0]?.data).not.toContain('sealed-at-rest');
    } finally {
      await replica.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}, 180_000);
