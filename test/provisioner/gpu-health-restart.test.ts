// A control-plane restart neither forgets a FAILURE nor counts a line or a counter value twice
// (docs/gpu-health.md): `gpufleet serve` as a child process, SIGKILLed after its watcher recorded an
// Xid 79 on a journald host, an Xid 79 on a dmesg host and an uncorrected ECC count rising to 3; a line
// written while it is down; then started again on the same store. Every FAILURE is there at once; the
// downtime line is recorded (live: it came after the first read); nothing before the kill is counted
// again (dmesg prints its whole ring buffer again, journald continues after the stored cursor, the
// ECC count stays 3); a new line after the restart counts. Embedded store, or PostgreSQL with
// GPUFLEET_TEST_STORE=postgres.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freePort, spawnControlPlane, spawnedAdminApi, type SpawnedControlPlane } from '../harness/control-plane.ts';
import { enrolTestHost, FIXTURE_GPUS, startTestHost, type TestHost } from '../harness/index.ts';
import { freshTestDatabase, TEST_SECRET_KEY, TEST_STORE } from '../harness/test-store.ts';
import { waitFor } from '../harness/wait-for.ts';

type Json = Record<string, any>;

let cp: SpawnedControlPlane | null = null;
let journalHost: TestHost;
let dmesgHost: TestHost;
let journalId = '';
let dmesgId = '';
let dataDir = '';
let env: Record<string, string> = {};
const api = spawnedAdminApi(() => cp);

async function start(): Promise<void> {
  cp = await spawnControlPlane({ dataDir, port: await freePort(), env });
}
const gpus = async (id: string) => ((await api(`/v2/hosts/${id}`)).body as Json).facts.gpus as Json[];
const counts = async (id: string) => (await gpus(id)).map((g) => g.incidents.map((i: Json) => `${i.xid ?? i.counter}×${i.count}${i.live ? '' : ' old'}`));

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-gpu-restart-'));
  env = { GPUFLEET_GPU_POLL_SECONDS: '1', GPUFLEET_RECONCILE_INTERVAL_MS: '500', ...(TEST_STORE === 'postgres' ? { GPUFLEET_DATABASE_URL: await freshTestDatabase(), GPUFLEET_SECRET_KEY: TEST_SECRET_KEY.toString('base64') } : {}) };
  const two = [FIXTURE_GPUS.H100_80GB_HBM3, FIXTURE_GPUS.H100_80GB_HBM3];
  journalHost = await startTestHost({ name: `gpurestart-j-${process.pid}`, gpus: two, kernelLog: 'journal' });
  dmesgHost = await startTestHost({ name: `gpurestart-d-${process.pid}`, gpus: two, kernelLog: 'dmesg' });
  await start();
  journalId = await enrolTestHost(cp!, journalHost);
  dmesgId = await enrolTestHost(cp!, dmesgHost);
  await waitFor('both watched', async () => (await gpus(journalId)).every((g) => g.busId) && (await gpus(dmesgId)).every((g) => g.busId), 30_000, 100);
}, 180_000);

afterAll(async () => {
  await cp?.kill('SIGTERM');
  await journalHost?.dispose();
  await dmesgHost?.dispose();
  await rm(dataDir, { recursive: true, force: true });
});

test('a restart keeps every FAILURE and replays no line and no counter value', async () => {
  await journalHost.gpu!.kernelLine('NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.');
  await dmesgHost.gpu!.kernelLine('NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.');
  await dmesgHost.gpu!.setGpuField(1, 'ecc.errors.uncorrected.volatile.total', 3);
  await waitFor('three incidents', async () => JSON.stringify([await counts(journalId), await counts(dmesgId)]) === JSON.stringify([[['79×1'], []], [['79×1'], ['ecc.errors.uncorrected.volatile.total×1']]]), 10_000, 100);

  // killed: nothing is flushed on the way out; what was recorded was recorded with its log position
  await cp!.kill('SIGKILL');
  cp = null;
  await journalHost.gpu!.kernelLine('NVRM: Xid (PCI:0000:28:00): 94, pid=2, Contained: SM (0x1). RST: No, D-RST: No');
  await dmesgHost.gpu!.kernelLine('NVRM: Xid (PCI:0000:28:00): 94, pid=2, Contained: SM (0x1). RST: No, D-RST: No');
  await start();

  // the failures are there before the watcher read anything
  expect((await gpus(journalId)).map((g) => g.health)).toEqual(['FAILURE', 'HEALTHY']);
  expect((await gpus(dmesgId)).map((g) => g.health)).toEqual(['FAILURE', 'FAILURE']);
  await waitFor('the downtime lines recorded', async () => (await gpus(journalId))[1]!.health === 'WARNING' && (await gpus(dmesgId))[1]!.incidents.length === 2, 15_000, 100);
  // a few polls and the whole dmesg ring buffer later: still each counted once
  await new Promise((r) => setTimeout(r, 3000));
  expect(await counts(journalId)).toEqual([['79×1'], ['94×1']]);
  expect(await counts(dmesgId)).toEqual([['79×1'], ['ecc.errors.uncorrected.volatile.total×1', '94×1']]);

  // and what comes after the restart counts
  await dmesgHost.gpu!.kernelLine('NVRM: Xid (PCI:0000:18:00): 79, pid=3, GPU has fallen off the bus.');
  await journalHost.gpu!.kernelLine('NVRM: Xid (PCI:0000:18:00): 79, pid=3, GPU has fallen off the bus.');
  await waitFor('the new lines counted', async () => (await counts(dmesgId))[0]![0] === '79×2' && (await counts(journalId))[0]![0] === '79×2', 10_000, 100);
});
