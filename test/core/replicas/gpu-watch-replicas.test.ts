// GPU health with several control planes on one PostgreSQL database (docs/gpu-health.md, docs/replicas.md):
// only the replica that holds a host's reconcile lease watches it, so the host's kernel log is followed
// once (the fixture counts each `dmesg --follow`) and an Xid line is counted once; when that replica
// stops, another takes the host and goes on from the stored position: nothing counted twice.
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { enrolTestHost, FIXTURE_GPUS, startTestHost, type TestHost } from '../../harness/index.ts';
import { startPostgres, type TestPostgres } from '../../harness/postgres.ts';
import { TEST_SECRET_KEY } from '../../harness/test-store.ts';
import { waitFor } from '../../harness/wait-for.ts';
import { provisioner } from '../../../provisioner/index.ts';

type Json = Record<string, any>;

let server: TestPostgres;
const cps: TestControlPlane[] = [];
let host: TestHost;
let hostId = '';
let url = '';

const gpu0 = async (cp: TestControlPlane) => ((await (await cp.api(`/v2/hosts/${hostId}`)).json()) as Json).facts.gpus[0] as Json;

beforeAll(async () => {
  server = await startPostgres();
  url = await server.createDatabase();
  host = await startTestHost({ name: `gpuwatch-replicas-${process.pid}`, gpus: [FIXTURE_GPUS.H100_80GB_HBM3], kernelLog: 'dmesg' });
  for (let i = 0; i < 2; i++)
    cps.push(await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300, config: { databaseUrl: url, secretKey: TEST_SECRET_KEY, gpuPollSeconds: 1 } }));
  hostId = await enrolTestHost(cps[0]!, host);
  await waitFor('the host watched', async () => (await gpu0(cps[1]!)).busId, 30_000, 100);
}, 180_000);

afterAll(async () => {
  for (const cp of cps) await cp.close().catch(() => undefined);
  await host?.dispose();
  await server?.stop();
});

test('one replica watches the host; after it stops, the other goes on without counting anything twice', async () => {
  // several lease syncs and polls later, still one follow: the other replica never started one
  await new Promise((r) => setTimeout(r, 4000));
  expect(await host.gpu!.follows()).toBe(1);
  await host.gpu!.kernelLine('NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.');
  await waitFor('FAILURE', async () => (await gpu0(cps[0]!)).health === 'FAILURE', 10_000, 100);
  await new Promise((r) => setTimeout(r, 1500));
  expect((await gpu0(cps[1]!)).incidents).toMatchObject([{ xid: 79, count: 1 }]);

  // stop the replica that watches: the one holding the host's reconcile lease
  const holder = await holderOf();
  await holder.close();
  const other = cps.find((c) => c !== holder)!;
  await waitFor('the other replica follows the log', async () => (await host.gpu!.follows()) >= 2, 30_000, 200);
  await new Promise((r) => setTimeout(r, 2000));
  expect((await gpu0(other)).incidents).toMatchObject([{ xid: 79, count: 1 }]);
  await host.gpu!.kernelLine('NVRM: Xid (PCI:0000:18:00): 79, pid=2, GPU has fallen off the bus.');
  await waitFor('counted once more', async () => (await gpu0(other)).incidents[0]?.count === 2, 10_000, 100);
  cps.splice(cps.indexOf(holder), 1);
});

/** the replica whose reconcile leases include the host (the one that watches it) */
async function holderOf(): Promise<TestControlPlane> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const rows = await db.query('SELECT holder FROM gf_host_leases WHERE host_id = $1', [hostId]).finally(() => db.end());
  const holder = rows.rows[0]?.holder as string | undefined;
  const cp = cps.find((c) => c.services.replicaId === holder);
  if (!cp) throw new Error(`no replica holds ${hostId} (${holder})`);
  return cp;
}
