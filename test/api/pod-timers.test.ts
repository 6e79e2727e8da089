// GraphQL stopAfter / terminateAfter (docs/pods.md#stop-and-terminate-timers), as runpodctl sends them
// in podFindAndDeployOnDemand / deployCpuPod: honoured at their time (never before, within one
// reconcile interval after, on a loaded machine a few seconds more), recorded as events by `system`,
// stored with the pod so a control plane restarted across the time fires it; a value that does not
// parse is a GraphQL error naming the field, and creates nothing. Record-only hosts: no provisioner.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { waitFor } from '../harness/wait-for.ts';

const INTERVAL_MS = 200;
/** what a loaded 2-core machine may add to one interval */
const SLACK_MS = 3000;

let cp: TestControlPlane;
let user: { accountId: string; key: string };
beforeAll(async () => {
  cp = await startTestControlPlane({ reconcileIntervalMs: INTERVAL_MS });
  await seedHosts(cp.services.store, [{ id: 'timer-host', gpus: 8 }]);
  user = await cp.newAccount('read_write');
});
afterAll(async () => cp?.close());

const DEPLOY = `mutation($input: PodFindAndDeployOnDemandInput!) { podFindAndDeployOnDemand(input: $input) { id desiredStatus } }`;
type Gql = { data?: { podFindAndDeployOnDemand: { id: string } | null }; errors?: { message: string; extensions?: { code?: string } }[] };

async function deploy(target: TestControlPlane, key: string, extra: Record<string, unknown>): Promise<Gql> {
  const res = await target.api('/graphql', {
    method: 'POST',
    key,
    json: { query: DEPLOY, variables: { input: { name: `timed-${Math.random().toString(36).slice(2, 8)}`, imageName: 'busybox:1.36', gpuTypeId: 'NVIDIA H100 80GB HBM3', gpuCount: 1, cloudType: 'SECURE', containerDiskInGb: 5, ...extra } } },
  });
  return (await res.json()) as Gql;
}
const view = async (target: TestControlPlane, key: string, id: string) => (await (await target.api(`/v2/pods/${id}`, { key })).json()) as Record<string, any>;
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString().replace(/\.\d+Z$/, 'Z');

test('stopAfter stops and terminateAfter terminates at their time, not before; events say why, by system', async () => {
  const stopAt = inMs(2500);
  const terminateAt = inMs(3500);
  const stopping = await deploy(cp, user.key, { stopAfter: stopAt });
  const ending = await deploy(cp, user.key, { terminateAfter: terminateAt });
  expect(stopping.errors).toBeUndefined();
  const stopId = stopping.data!.podFindAndDeployOnDemand!.id;
  const endId = ending.data!.podFindAndDeployOnDemand!.id;
  // the timers are stored and shown, as UTC RFC 3339
  expect(await view(cp, user.key, stopId)).toMatchObject({ stopAfter: new Date(stopAt).toISOString(), terminateAfter: null });
  expect(await view(cp, user.key, endId)).toMatchObject({ terminateAfter: new Date(terminateAt).toISOString() });

  // not before: up to its time both still hold their GPUs
  while (Date.now() < Date.parse(stopAt) - 150) {
    expect((await view(cp, user.key, stopId)).status).toBe('PROVISIONING');
    await new Promise((r) => setTimeout(r, 100));
  }
  const stopped = await waitFor('the stop timer', async () => {
    const v = await view(cp, user.key, stopId);
    return v.status === 'EXITED' ? { v, at: Date.now() } : null;
  }, 20_000, 50);
  expect(stopped.at).toBeGreaterThanOrEqual(Date.parse(stopAt));
  expect(stopped.at - Date.parse(stopAt)).toBeLessThan(INTERVAL_MS + SLACK_MS);
  expect(stopped.v).toMatchObject({ desiredStatus: 'EXITED', stopAfter: null, statusReason: `stopped: its stopAfter time ${new Date(stopAt).toISOString()} was reached` });
  expect(stopped.v.events.at(-1)).toMatchObject({ type: 'pod.exited', actor: 'system', reason: expect.stringContaining('stopAfter') });
  expect((await view(cp, user.key, endId)).status).toBe('PROVISIONING');

  const ended = await waitFor('the terminate timer', async () => {
    const v = await view(cp, user.key, endId);
    return v.status === 'TERMINATED' ? { v, at: Date.now() } : null;
  }, 20_000, 50);
  expect(ended.at).toBeGreaterThanOrEqual(Date.parse(terminateAt));
  expect(ended.at - Date.parse(terminateAt)).toBeLessThan(INTERVAL_MS + SLACK_MS);
  expect(ended.v.events.at(-1)).toMatchObject({ type: 'pod.terminated', actor: 'system', reason: expect.stringContaining('terminateAfter') });
  // the stopped pod started again by its owner is not stopped a second time
  await cp.api(`/v2/pods/${stopId}/action`, { method: 'POST', key: user.key, json: { action: 'start' } });
  await new Promise((r) => setTimeout(r, INTERVAL_MS * 4));
  expect((await view(cp, user.key, stopId)).status).toBe('PROVISIONING');
});

test('a value that is not an ISO 8601 date-time is a GraphQL error naming the field, and nothing is created', async () => {
  const before = (await (await cp.api('/v2/pods', { key: user.key })).json()) as { pods: unknown[] };
  for (const [field, value] of [['stopAfter', 'tomorrow'], ['terminateAfter', '2026-13-45T99:00:00Z'], ['terminateAfter', '2026-05-01 12:00']] as const) {
    const r = await deploy(cp, user.key, { [field]: value });
    expect(r.data?.podFindAndDeployOnDemand ?? null).toBeNull();
    expect(r.errors?.[0]?.message).toContain(`$.input.${field}`);
    expect(r.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
  }
  const after = (await (await cp.api('/v2/pods', { key: user.key })).json()) as { pods: unknown[] };
  expect(after.pods).toHaveLength(before.pods.length);
});

test('terminateAfter survives a control-plane restart: the time passes while it is down, the next one fires it', async () => {
  // a data directory of the test's own: a control plane removes the one it made when it closes
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-timers-'));
  const first = await startTestControlPlane({ reconcileIntervalMs: INTERVAL_MS, dataDir });
  let second: TestControlPlane | null = null;
  try {
    await seedHosts(first.services.store, [{ id: 'restart-host', gpus: 8 }]);
    const owner = await first.newAccount('read_write');
    const at = inMs(2000);
    const r = await deploy(first, owner.key, { terminateAfter: at });
    const id = r.data!.podFindAndDeployOnDemand!.id;
    await first.close();
    await new Promise((res) => setTimeout(res, Math.max(0, Date.parse(at) - Date.now()) + 300));
    second = await startTestControlPlane({ reconcileIntervalMs: INTERVAL_MS, dataDir });
    const restarted = Date.now();
    const ended = await waitFor('the terminate timer after the restart', async () => {
      const v = await view(second!, owner.key, id);
      return v.status === 'TERMINATED' ? v : null;
    }, 20_000, 50);
    expect(Date.now() - restarted).toBeLessThan(INTERVAL_MS + SLACK_MS);
    expect(ended).toMatchObject({ terminateAfter: null, statusReason: `terminated: its terminateAfter time ${new Date(at).toISOString()} was reached` });
  } finally {
    await second?.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});
