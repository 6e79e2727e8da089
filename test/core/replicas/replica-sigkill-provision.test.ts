// Three control-plane processes (`gpufleet serve`, as an operator runs them) on one real PostgreSQL
// database and one real sshd test host driving Docker. Exactly one replica reconciles the host (its
// reconcile lease); SIGKILL that replica while its `docker run` for a new pod is in flight on the
// host (the host's docker wrapper holds the run: testing/docker-run-gate.ts), and another replica
// takes the host over within 10 s, finishes the pod, and the pod has exactly one container. The
// serverless autoscaler runs on one replica of the three, the leader, and moves when it dies.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort, spawnControlPlane, type SpawnedControlPlane } from '../../harness/control-plane.ts';
import { ensureTestImage, FIXTURE_GPUS, listContainers, removeContainersByLabel, removeNetworksByLabel, startTestHost, type TestHost } from '../../harness/index.ts';
import { startPostgres, type TestPostgres } from '../../harness/postgres.ts';
import { TEST_SECRET_KEY } from '../../harness/test-store.ts';

const SLEEPER = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
let server: TestPostgres;
let url: string;
let db: pg.Client;
let h: TestHost;
let hostId = '';
const replicas: SpawnedControlPlane[] = [];
const dirs: string[] = [];
const storageRoot = path.join(os.tmpdir(), `gpufleet-pods-replicas-${process.pid}`);

async function spawnReplica(): Promise<SpawnedControlPlane> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-replica-'));
  dirs.push(dataDir);
  const cp = await spawnControlPlane({
    dataDir,
    port: await freePort(),
    env: {
      GPUFLEET_DATABASE_URL: url,
      GPUFLEET_SECRET_KEY: TEST_SECRET_KEY.toString('base64'),
      GPUFLEET_RECONCILE_INTERVAL_MS: '300',
      GPUFLEET_POD_STORAGE_ROOT: storageRoot,
      GPUFLEET_LOG_LEVEL: 'info',
    },
  });
  replicas.push(cp);
  return cp;
}

async function api(cp: SpawnedControlPlane, p: string, init: { method?: string; json?: unknown } = {}) {
  const res = await fetch(cp.url + p, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${cp.adminKey}`, ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
  });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as Record<string, any>) };
}

async function waitFor<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const alive = (cp: SpawnedControlPlane) => cp.proc.exitCode === null && cp.proc.signalCode === null;

/** the live lease of the host: the replica process holding it (its id carries its pid) */
async function leaseHolder(): Promise<{ holder: string; replica: SpawnedControlPlane | undefined } | null> {
  const r = await db.query<{ holder: string }>('SELECT holder FROM gf_host_leases WHERE host_id = $1 AND expires_at > now()', [hostId]);
  const holder = r.rows[0]?.holder;
  if (!holder) return null;
  return { holder, replica: replicas.find((cp) => alive(cp) && holder.includes(`-${cp.proc.pid}-`)) };
}

beforeAll(async () => {
  await ensureTestImage();
  server = await startPostgres();
  url = await server.createDatabase();
  db = new pg.Client({ connectionString: url });
  await db.connect();
  h = await startTestHost({ name: `replicas-${process.pid}`, gpus: [FIXTURE_GPUS.RTX_4090, FIXTURE_GPUS.RTX_4090], dockerRunGate: true });
  // one after the other: the first migrates the empty database and creates the admin key
  for (let i = 0; i < 3; i++) await spawnReplica();
  const res = await api(replicas[0]!, '/v2/hosts', { method: 'POST', json: { ssh: `root@${h.address}:${h.port}`, privateKey: h.privateKey } });
  expect(res.status).toBe(201);
  hostId = res.body!.id;
}, 180_000);

afterAll(async () => {
  await h?.dockerRunGate?.abort();
  for (const cp of replicas) await cp.kill('SIGTERM').catch(() => undefined);
  if (hostId) {
    await removeContainersByLabel(`gpufleet.host=${hostId}`).catch(() => undefined);
    await removeNetworksByLabel(`gpufleet.host=${hostId}`).catch(() => undefined);
  }
  await h?.dispose();
  await db?.end().catch(() => undefined);
  await server?.stop();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  await rm(storageRoot, { recursive: true, force: true });
});

/** the replica holding the autoscaler's lead (gf_leaders), if it is one of ours and alive */
async function leader(): Promise<{ holder: string; replica: SpawnedControlPlane | undefined } | null> {
  const r = await db.query<{ holder: string }>("SELECT holder FROM gf_leaders WHERE name = 'fleet' AND expires_at > now()");
  const holder = r.rows[0]?.holder;
  if (!holder) return null;
  return { holder, replica: replicas.find((cp) => alive(cp) && holder.includes(`-${cp.proc.pid}-`)) };
}

test('exactly one replica runs the autoscaler; SIGKILL it and another takes the lead within 10 s', async () => {
  const first = await waitFor('a leader', async () => {
    const l = await leader();
    return l?.replica ? l : null;
  }, 15_000);
  const live = replicas.filter(alive);
  const runs = live.filter((cp) => cp.output().includes('this replica now runs the autoscaler'));
  expect(runs).toEqual([first.replica]);
  const killedAt = Date.now();
  await first.replica!.kill('SIGKILL');
  const next = await waitFor('another leader', async () => {
    const l = await leader();
    return l && l.holder !== first.holder && l.replica ? l : null;
  }, 15_000);
  expect(Date.now() - killedAt).toBeLessThan(10_000);
  await waitFor('its autoscaler started', async () => next.replica!.output().includes('this replica now runs the autoscaler'), 5_000);
  // three replicas again for the tests that follow
  await spawnReplica();
}, 60_000);

test('the replica holding the host is SIGKILLed during docker run: another takes the host within 10 s and finishes the pod, with exactly one container', async () => {
  const first = await waitFor('a replica to hold the host', async () => {
    const l = await leaseHolder();
    return l?.replica ? l : null;
  }, 15_000);
  const holder = first.replica!;
  const other = replicas.find((cp) => cp !== holder && alive(cp))!;
  await waitFor('the host READY', async () => (await api(other, `/v2/hosts/${hostId}`)).body?.status === 'READY');

  const gate = h.dockerRunGate!;
  await gate.hold();
  // created through a replica that does not hold the host: the holder hears of it (LISTEN/NOTIFY)
  const created = await api(other, '/v2/pods', { method: 'POST', json: { name: 'rk', image: 'gpufleet-test/busybox:latest', args: SLEEPER, disk: 1, gpu: { id: 'NVIDIA GeForce RTX 4090' } } });
  expect(created.status).toBe(201);
  const id = created.body!.id as string;
  // the holder's run has reached the host and waits there; nobody else ran one (one reconciler per host)
  expect(await gate.waitHeld(1)).toEqual([expect.stringContaining(id)]);
  await new Promise((r) => setTimeout(r, 1500));
  expect(await gate.held()).toHaveLength(1);
  expect(await listContainers(`gpufleet.pod=${id}`)).toEqual([]);
  expect((await leaseHolder())?.holder).toBe(first.holder);

  const killedAt = Date.now();
  await holder.kill('SIGKILL');
  const next = await waitFor('another replica to take the host', async () => {
    const l = await leaseHolder();
    return l && l.holder !== first.holder && l.replica ? l : null;
  }, 15_000);
  const takeoverMs = Date.now() - killedAt;
  console.log(`host taken over by another replica ${takeoverMs} ms after the SIGKILL`);
  expect(takeoverMs).toBeLessThan(10_000);
  // the new holder sees no container (the dead replica's run is still held) and runs its own: two
  // runs for one pod on the host, one container name between them
  expect(await gate.waitHeld(2, 10_000)).toEqual([expect.stringContaining(id), expect.stringContaining(id)]);
  await gate.release();
  await waitFor(`pod ${id} RUNNING`, async () => (await api(next.replica!, `/v2/pods/${id}`)).body?.status === 'RUNNING', 30_000);
  console.log(`pod RUNNING ${Date.now() - killedAt} ms after the SIGKILL`);
  const cs = await listContainers(`gpufleet.pod=${id}`);
  expect(cs.length, `containers of pod ${id}: ${cs.map((c) => c.Name).join(', ')}`).toBe(1);
  expect(cs[0]!.State.Running).toBe(true);
  // and it stays one: the passes that follow adopt it
  await new Promise((r) => setTimeout(r, 1500));
  expect((await listContainers(`gpufleet.pod=${id}`)).map((c) => c.Id)).toEqual([cs[0]!.Id]);
  // exactly one replica holds the host now
  const leases = await db.query('SELECT holder FROM gf_host_leases WHERE host_id = $1', [hostId]);
  expect(leases.rows).toHaveLength(1);

  await api(next.replica!, `/v2/pods/${id}`, { method: 'DELETE' });
  await waitFor('containers removed', async () => (await listContainers(`gpufleet.host=${hostId}`)).length === 0);
}, 120_000);

test('a replica stopped cleanly (SIGTERM) gives its hosts up at once: another takes them at its next sync', async () => {
  const first = await waitFor('a live replica to hold the host', async () => {
    const l = await leaseHolder();
    return l?.replica ? l : null;
  }, 15_000);
  const stoppedAt = Date.now();
  await first.replica!.kill('SIGTERM');
  await waitFor('another replica to take the host', async () => {
    const l = await leaseHolder();
    return l && l.holder !== first.holder && l.replica ? l : null;
  }, 10_000);
  const ms = Date.now() - stoppedAt;
  console.log(`host taken over ${ms} ms after SIGTERM`);
  // released, not left to expire: well under the lease's lifetime after the process is gone
  expect(ms).toBeLessThan(5_000);
}, 60_000);
