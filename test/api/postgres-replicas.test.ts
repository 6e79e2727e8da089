// Several control planes on one PostgreSQL database (docs/postgres.md): one admin key between them
// however they start, never one GPU to two pods whichever replica each create reaches, and the
// database restarted under load: 503 problem+json while it is down, nothing acknowledged lost, and
// service resumes.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startControlPlane } from '../../api/index.ts';
import { configFromEnv } from '../../core/index.ts';
import { ADMIN_KEY, startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { startPostgres, type TestPostgres } from '../harness/postgres.ts';
import { waitFor } from '../harness/wait-for.ts';

const SECRET_KEY = Buffer.alloc(32, 9);
const H100 = 'NVIDIA H100 80GB HBM3';

let cluster: TestPostgres;
beforeAll(async () => {
  cluster = await startPostgres();
}, 120_000);
afterAll(async () => cluster?.stop());

// quotas far above what the load below sends: while the database is down each request fails fast
// (503), so the loops send hundreds a second, and rate limiting is not what these tests look at
const replica = (databaseUrl: string) =>
  startTestControlPlane({ rateLimits: 'minute=10000000,hour=100000000,day=1000000000', config: { databaseUrl, secretKey: SECRET_KEY } });

describe('three replicas on one database', () => {
  let cps: TestControlPlane[] = [];
  beforeAll(async () => {
    const url = await cluster.createDatabase();
    // started together: each runs migrations and the bootstrap against the same empty database
    cps = await Promise.all([replica(url), replica(url), replica(url)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all(cps.map((cp) => cp.close()));
  });

  it('GPUFLEET_BOOTSTRAP_KEY creates one operator account and one admin key, whichever replica starts first', async () => {
    const store = cps[0]!.services.store;
    expect(await store.count('apiKeys')).toBe(1);
    expect(await store.count('accounts', { operator: true })).toBe(1);
    for (const cp of cps) expect((await cp.api('/v2/pods')).status).toBe(200);
    expect(cps.filter((cp) => cp.bootstrapKey !== null)).toHaveLength(1);
  });

  it('concurrent GPU pod creates spread over all three never double-book a GPU; the rest are 400 with the placement reason, never 5xx', async () => {
    await seedHosts(cps[0]!.services.store, [{ gpus: 8 }, { gpus: 8 }]);
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        cps[i % 3]!.api('/v2/pods', { method: 'POST', json: { name: `r-${i}`, image: 'img', disk: 1, gpu: { id: H100 } } }).then(async (r) => ({
          status: r.status,
          type: r.headers.get('content-type'),
          body: (await r.json()) as Record<string, unknown>,
        })),
      ),
    );
    const placed = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status !== 201);
    expect(placed).toHaveLength(16);
    expect(refused.map((r) => [r.status, r.body.code])).toEqual(Array(14).fill([400, 'CAPACITY_UNAVAILABLE']));
    expect(refused.every((r) => r.type?.startsWith('application/problem+json'))).toBe(true);
    const pods = await cps[1]!.services.store.list('pods');
    const gpus = pods.flatMap((p) => p.gpuUuids.map((g) => `${p.hostId}/${g}`));
    expect(gpus).toHaveLength(16);
    expect(new Set(gpus).size).toBe(16);
    // every replica's own placer has heard of all of them: each now refuses at once
    for (const cp of cps) {
      const r = await cp.api('/v2/pods', { method: 'POST', json: { name: `late-${Math.random()}`, image: 'img', disk: 1, gpu: { id: H100 } } });
      expect(r.status).toBe(400);
    }
    // and a pod made on one is read through another at once
    const id = placed[0]!.body.id as string;
    for (const cp of cps) expect((await cp.api(`/v2/pods/${id}`)).status).toBe(200);
  }, 120_000);
});

describe('the database restarted mid-load', () => {
  it('answers 503 problem+json while it is down, loses no acknowledged write, and serves again when it is back', async () => {
    const url = await cluster.createDatabase();
    const [a, b] = await Promise.all([replica(url), replica(url)]);
    try {
      const acknowledged: string[] = [];
      const outcomes: { status: number; code?: string; type: string | null }[] = [];
      let stop = false;
      let n = 0;
      const load = async (cp: TestControlPlane) => {
        while (!stop) {
          const name = `t-${++n}`;
          try {
            const r = await cp.api('/v2/templates', { method: 'POST', json: { name, image: 'img' } });
            const body = (await r.json().catch(() => ({}))) as { id?: string; code?: string };
            outcomes.push({ status: r.status, code: body.code, type: r.headers.get('content-type') });
            if (r.status === 200 || r.status === 201) acknowledged.push(body.id!);
          } catch {
            outcomes.push({ status: 0, type: null });
          }
        }
      };
      const loops = [load(a), load(b), load(a), load(b)];
      await waitFor('some writes acknowledged', async () => acknowledged.length >= 20, 20_000, 20);
      await cluster.kill();
      const atKill = outcomes.length;
      await waitFor('requests answered while the database is down', async () => outcomes.length - atKill >= 10, 20_000, 20);
      const ready = await a.api('/readyz', { key: null });
      expect(ready.status).toBe(503);
      await cluster.start();
      const atStart = acknowledged.length;
      await waitFor('writes acknowledged again', async () => acknowledged.length >= atStart + 20, 30_000, 50);
      stop = true;
      await Promise.all(loops);
      const down = outcomes.slice(atKill).filter((o) => o.status !== 200 && o.status !== 201);
      expect(down.length).toBeGreaterThan(0);
      // every failure is a 503 problem+json naming the store; nothing else (no 500, no dropped connection)
      for (const o of outcomes.filter((x) => x.status !== 200 && x.status !== 201)) {
        expect(o.status).toBe(503);
        expect(o.type).toMatch(/^application\/problem\+json/);
        expect(o.code).toBe('STORE_UNAVAILABLE');
      }
      expect((await a.api('/readyz', { key: null })).status).toBe(200);
      const stored = new Set((await b.services.store.list('templates')).map((t) => t.id));
      for (const id of acknowledged) expect(stored.has(id)).toBe(true);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 120_000);
});

describe('GPUFLEET_SECRET_KEY at start', () => {
  it('is required with a database, must be 32 bytes in base64, and must open the database it joins', async () => {
    const url = await cluster.createDatabase();
    const base = { ...configFromEnv({}), port: 0, logLevel: 'silent', provisioner: false, bootstrapKey: ADMIN_KEY, dataDir: '/nonexistent-gpufleet-test' };
    await expect(startControlPlane({ ...base, databaseUrl: url })).rejects.toThrow(/GPUFLEET_SECRET_KEY is required/);
    expect(() => configFromEnv({ GPUFLEET_SECRET_KEY: Buffer.alloc(16).toString('base64') })).toThrow(/32 bytes in base64/);
    expect(configFromEnv({ GPUFLEET_SECRET_KEY: SECRET_KEY.toString('base64') }).secretKey?.equals(SECRET_KEY)).toBe(true);
    const first = await replica(url);
    await first.close();
    await expect(startTestControlPlane({ config: { databaseUrl: url, secretKey: Buffer.alloc(32, 1) } })).rejects.toThrow(/does not open the secrets/);
  }, 60_000);

  it('without a database it replaces secret.key: no key file is written, and data sealed with it opens with it only', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'gf-secret-key-'));
    const embedded = (secretKey: Buffer) => startTestControlPlane({ dataDir, config: { databaseUrl: undefined, secretKey } });
    try {
      let cp = await embedded(SECRET_KEY);
      const t = await cp.api('/v2/templates', { method: 'POST', json: { name: 'sealed', image: 'img', env: { TOKEN: 'kept-secret' } } });
      expect(t.status).toBe(201);
      const id = ((await t.json()) as { id: string }).id;
      await cp.close();
      expect(existsSync(path.join(dataDir, 'secret.key'))).toBe(false);
      cp = await embedded(SECRET_KEY);
      expect(((await (await cp.api(`/v2/templates/${id}`)).json()) as { env: Record<string, string> }).env).toEqual({ TOKEN: 'kept-secret' });
      await cp.close();
      await expect(embedded(Buffer.alloc(32, 1))).rejects.toThrow(/cannot be opened/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
