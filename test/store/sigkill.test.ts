// A control plane killed with SIGKILL in the middle of a burst of creates loses no acknowledged
// write: every pod whose POST /v2/pods answered 201 is there after a restart on the same data dir.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { LowdbStore } from '../../store/embedded/lowdb-store.ts';
import { ADMIN_KEY, freePort, spawnControlPlane, type SpawnedControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';

const BURST = 600;
const IN_FLIGHT = 48;
const KILL_AFTER = 150; // acknowledged creates before the kill

let dataDir = '';
const procs: SpawnedControlPlane[] = [];
afterAll(async () => {
  for (const p of procs) await p.kill('SIGKILL').catch(() => undefined);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const auth = { authorization: `Bearer ${ADMIN_KEY}` };
// the seeded host is a record only: no provisioner may dial it (and mark it UNREACHABLE)
const NO_PROVISIONER = { GPUFLEET_PROVISIONER: 'off' };

test('SIGKILL mid-burst: every acknowledged pod survives the restart', { timeout: 120_000 }, async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-sigkill-'));
  // one CPU host big enough for the whole burst, written before the control plane starts
  const seed = await LowdbStore.open({ dir: dataDir });
  await seedHosts(seed, [{ id: 'cpu-huge', gpus: 0, cpuCount: 100_000, memoryGb: 1_000_000, diskFreeGb: 100_000_000 }]);
  await seed.close();

  const cp = await spawnControlPlane({ dataDir, port: await freePort(), env: NO_PROVISIONER });
  procs.push(cp);

  const acked: string[] = [];
  let failedInFlight = 0;
  let next = 0;
  let killed = false;
  const worker = async () => {
    while (next < BURST) {
      const i = next++;
      try {
        const res = await fetch(`${cp.url}/v2/pods`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `burst-${i}`, image: 'busybox', disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 } }),
        });
        const body = (await res.json()) as { id?: string; detail?: string };
        if (res.status !== 201) throw new Error(`create ${i}: ${res.status} ${body.detail}`);
        acked.push(body.id!);
        if (acked.length === KILL_AFTER && !killed) {
          killed = true;
          cp.proc.kill('SIGKILL'); // no graceful close: no final snapshot, no journal flush
        }
      } catch (e) {
        if (!killed) throw e;
        failedInFlight++;
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  await cp.exited;

  expect(killed).toBe(true);
  // the kill really landed mid-burst: requests were in flight or still to come
  expect(failedInFlight).toBeGreaterThan(0);
  expect(acked.length).toBeGreaterThanOrEqual(KILL_AFTER);
  expect(acked.length).toBeLessThan(BURST);

  const again = await spawnControlPlane({ dataDir, port: await freePort(), env: NO_PROVISIONER });
  procs.push(again);
  const missing: string[] = [];
  for (const id of acked) {
    const res = await fetch(`${again.url}/v2/pods/${id}`, { headers: auth });
    if (res.status !== 200) missing.push(`${id} (${res.status})`);
  }
  expect(missing, `${missing.length} of ${acked.length} acknowledged pods lost`).toEqual([]);
  // the list agrees, and holds at most the pods the server got to commit
  const list = (await (await fetch(`${again.url}/v2/pods`, { headers: auth })).json()) as { pods: { id: string }[] };
  const listed = new Set(list.pods.map((p) => p.id));
  for (const id of acked) expect(listed.has(id)).toBe(true);
  expect(listed.size).toBeLessThanOrEqual(BURST);
  // the restarted store accepts writes (the journal was not left in a broken state)
  const res = await fetch(`${again.url}/v2/pods`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'after-restart', image: 'busybox', disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 } }),
  });
  expect(res.status).toBe(201);
  await again.kill('SIGTERM');
});

test('SIGKILL the moment a concurrent burst is acknowledged: nothing acknowledged is lost', { timeout: 120_000 }, async () => {
  // The hardest moment for group commit: the last lines were appended while an fdatasync was in
  // flight and no later request comes to push them out. Killed right after the last 201, before the
  // periodic snapshot, the journal alone must hold every acknowledged create.
  const cp = await spawnControlPlane({ dataDir, port: await freePort(), env: NO_PROVISIONER });
  procs.push(cp);
  const ids = await Promise.all(
    Array.from({ length: 200 }, async (_, i) => {
      const res = await fetch(`${cp.url}/v2/pods`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `wave-${i}`, image: 'busybox', disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 } }),
      });
      const body = (await res.json()) as { id: string; detail?: string };
      expect(res.status, body.detail).toBe(201);
      return body.id;
    }),
  );
  cp.proc.kill('SIGKILL');
  await cp.exited;
  const again = await spawnControlPlane({ dataDir, port: await freePort(), env: NO_PROVISIONER });
  procs.push(again);
  const missing: string[] = [];
  for (const id of ids) if ((await fetch(`${again.url}/v2/pods/${id}`, { headers: auth })).status !== 200) missing.push(id);
  expect(missing, `${missing.length} of ${ids.length} acknowledged pods lost`).toEqual([]);
  await again.kill('SIGTERM');
});
