// Status conditions (docs/pods.md and docs/fleet.md "Conditions") as the v2 views show them, with a
// real sshd test host, the real Docker engine and the provisioner: a pod's Scheduled, ImageReady and
// ContainerRunning across create → RUNNING → stop → start → terminate; a pull of an image its registry
// does not have (the condition's message is our sentence, nothing the registry said); a step that
// fails and backs off (docker wrapper on the host's PATH), whose rewording keeps lastTransitionTime;
// and a drained host's Schedulable.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, dockerInspect, enrolTestHost, ensureTestImage, startTestHost, type TestHost } from '../harness/index.ts';
import { waitFor } from '../harness/wait-for.ts';
import { provisioner } from '../../provisioner/index.ts';

type Json = Record<string, any>;
type Condition = { type: string; status: string; reason: string; message: string; lastTransitionTime: string };

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let image: string;
let registry: Server;
let registryAddress = '';
const SLEEPER = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
/** what the registry answers for every manifest: none of it may reach a condition */
const REGISTRY_WORDS = 'words-only-the-registry-says';

beforeAll(async () => {
  image = await ensureTestImage();
  // a registry that has no image at all: the ping answers, every manifest is 404 MANIFEST_UNKNOWN
  registry = createServer((req, res) => {
    if (req.url === '/v2/' || req.url === '/v2') res.writeHead(200, { 'content-type': 'application/json', 'docker-distribution-api-version': 'registry/2.0' }).end('{}');
    else res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ errors: [{ code: 'MANIFEST_UNKNOWN', message: REGISTRY_WORDS }] }));
  });
  await new Promise<void>((r) => registry.listen(0, '127.0.0.1', r));
  registryAddress = `127.0.0.1:${(registry.address() as AddressInfo).port}`;
  host = await startTestHost({ name: `conditions-${process.pid}`, dockerFaults: true });
  cp = await startTestControlPlane({
    background: [provisioner({ networkLingerMs: 0 })],
    reconcileIntervalMs: 300,
    metricsIntervalMs: 500,
    config: { allowedRegistries: [registryAddress] },
  });
  hostId = await enrolTestHost(cp, host);
}, 180_000);

afterAll(async () => {
  await disposeHostWorld({ cp, host, hostId });
  await new Promise((r) => registry?.close(r));
});

const cond = (view: Json, type: string): Condition | undefined => (view.conditions as Condition[]).find((c) => c.type === type);
const pod = async (id: string, key?: string) => (await (await cp.api(`/v2/pods/${id}`, key ? { key } : {})).json()) as Json;
const hostView = async () => (await (await cp.api(`/v2/hosts/${hostId}`)).json()) as Json;
async function podWhere(id: string, what: string, ok: (p: Json) => boolean, key?: string, timeoutMs = 30_000): Promise<Json> {
  let last: Json = {};
  return waitFor(what, async () => {
    last = await pod(id, key);
    return ok(last) ? last : null;
  }, timeoutMs, 50).catch((err: unknown) => {
    throw new Error(`${String(err)}; the pod reads ${last.status}: ${last.statusReason} ${JSON.stringify(last.conditions)}`);
  });
}
async function create(json: Json, key?: string): Promise<Json> {
  const res = await cp.api('/v2/pods', { method: 'POST', json, ...(key ? { key } : {}) });
  const body = (await res.json()) as Json;
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body;
}
const cpuPod = (name: string, over: Json = {}) => ({ name, image, args: SLEEPER, disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 1 }, ...over });

describe('a pod through its lifecycle', () => {
  test('create → RUNNING → stop → start → terminate: Scheduled, ImageReady, ContainerRunning, each timed at its own transitions', async () => {
    const created = await create(cpuPod('cond-life'));
    const id = created.id as string;
    expect(cond(created, 'Scheduled')).toMatchObject({ status: 'True', reason: 'Placed', message: `placed on host ${hostId}; its compute is held for the pod` });
    expect(cond(created, 'ContainerRunning')).toMatchObject({ status: 'False', reason: 'Pending' });
    expect(cond(created, 'ImageReady')).toBeUndefined();
    const placedAt = cond(created, 'Scheduled')!.lastTransitionTime;

    const running = await podWhere(id, 'RUNNING', (p) => p.status === 'RUNNING');
    expect(cond(running, 'Scheduled')).toMatchObject({ status: 'True', reason: 'Placed', lastTransitionTime: placedAt });
    expect(cond(running, 'ImageReady')).toMatchObject({ status: 'True', reason: 'Present', message: 'the image is on the host' });
    expect(cond(running, 'ContainerRunning')).toMatchObject({ status: 'True', reason: 'Running', message: 'the container is running' });
    expect(Date.parse(cond(running, 'ContainerRunning')!.lastTransitionTime)).toBeGreaterThanOrEqual(Date.parse(placedAt));
    // passes (300 ms) and metrics (500 ms) keep writing the pod: its conditions stay as they were
    await new Promise((r) => setTimeout(r, 1500));
    expect((await pod(id)).conditions).toEqual(running.conditions);

    const stopped = (await (await cp.api(`/v2/pods/${id}/action`, { method: 'POST', json: { action: 'stop' } })).json()) as Json;
    expect(cond(stopped, 'Scheduled')).toMatchObject({ status: 'False', reason: 'Released', message: 'stopped by user; its compute is released' });
    expect(cond(stopped, 'ContainerRunning')).toMatchObject({ status: 'False', reason: 'Stopped' });
    expect(cond(stopped, 'ImageReady')).toEqual(cond(running, 'ImageReady'));
    await waitFor('container stopped', async () => (await dockerInspect(`gpufleet-${id}`))?.State.Running === false);
    // the provisioner's writes of the stop: True (Stopping) while the container has its grace period
    // (docs/pods.md#stopping), then False (Stopped) again once it has exited
    const after = await podWhere(id, 'the stop recorded', (p) => p.statusReason === 'container stopped; GPUs released');
    expect(cond(after, 'ContainerRunning')).toMatchObject({ status: 'False', reason: 'Stopped', message: 'stopped by user' });
    expect(Date.parse(cond(after, 'ContainerRunning')!.lastTransitionTime)).toBeGreaterThanOrEqual(Date.parse(cond(stopped, 'ContainerRunning')!.lastTransitionTime));

    const started = (await (await cp.api(`/v2/pods/${id}/action`, { method: 'POST', json: { action: 'start' } })).json()) as Json;
    expect(cond(started, 'Scheduled')).toMatchObject({ status: 'True', reason: 'Placed' });
    expect(Date.parse(cond(started, 'Scheduled')!.lastTransitionTime)).toBeGreaterThan(Date.parse(cond(stopped, 'Scheduled')!.lastTransitionTime));
    await podWhere(id, 'RUNNING again', (p) => p.status === 'RUNNING' && cond(p, 'ContainerRunning')?.status === 'True');

    expect((await cp.api(`/v2/pods/${id}`, { method: 'DELETE' })).status).toBe(204);
    const gone = await podWhere(id, 'terminated and removed', (p) => p.statusReason === 'terminated; container and storage removed');
    expect(cond(gone, 'Scheduled')).toMatchObject({ status: 'False', reason: 'Released', message: 'terminated; its compute is released' });
    expect(cond(gone, 'ContainerRunning')).toMatchObject({ status: 'False', reason: 'Terminated' });
  });
});

describe('an image the registry does not have', () => {
  test("ImageReady False (PullFailed) with our sentence, ContainerRunning False (ImageUnavailable), Scheduled False (Released); nothing the registry said", async () => {
    const { id } = await create(cpuPod('cond-missing', { image: `${registryAddress}/missing/image:1`, args: '' }));
    const failed = await podWhere(id, 'ERROR', (p) => p.status === 'ERROR');
    const image = cond(failed, 'ImageReady')!;
    expect({ ...image, lastTransitionTime: undefined }).toEqual({ type: 'ImageReady', status: 'False', reason: 'PullFailed', message: 'image pull failed: image not found', lastTransitionTime: undefined });
    expect(Number.isNaN(Date.parse(image.lastTransitionTime))).toBe(false);
    expect(cond(failed, 'ContainerRunning')).toMatchObject({ status: 'False', reason: 'ImageUnavailable', message: 'the image could not be pulled' });
    expect(cond(failed, 'Scheduled')).toMatchObject({ status: 'False', reason: 'Released', message: 'the pod failed; its compute is released' });
    const text = JSON.stringify(failed.conditions);
    for (const raw of [REGISTRY_WORDS, 'MANIFEST_UNKNOWN', 'manifest unknown', 'Error response from daemon']) expect(text).not.toContain(raw);
    expect((await cp.api(`/v2/pods/${id}`, { method: 'DELETE' })).status).toBe(204);
  });
});

describe('a step that fails on the host and backs off', () => {
  test('ContainerRunning False (RetryBackoff) says the retry in our words; rewording it keeps lastTransitionTime; RUNNING is a transition', async () => {
    const faults = host.dockerFaults!;
    await faults.failNext('network-create', 3);
    // a new account: its network is not on the host yet, so the pod's first step creates it
    const { key } = await cp.newAccount();
    const created = await create(cpuPod('cond-backoff'), key);
    const id = created.id as string;
    const since = cond(created, 'ContainerRunning')!.lastTransitionTime;
    const second = await podWhere(id, 'the second failure', (p) => /\(2 times in a row\)/.test(p.statusReason ?? ''), key);
    const third = await podWhere(id, 'the third failure', (p) => /\(3 times in a row\)/.test(p.statusReason ?? ''), key);
    for (const p of [second, third]) {
      expect(cond(p, 'ContainerRunning')).toEqual({ type: 'ContainerRunning', status: 'False', reason: 'RetryBackoff', message: p.statusReason, lastTransitionTime: since });
      expect(cond(p, 'ContainerRunning')!.message).not.toMatch(/docker fault|could not create network/);
    }
    expect(cond(second, 'ContainerRunning')!.message).not.toBe(cond(third, 'ContainerRunning')!.message);
    const running = await podWhere(id, 'RUNNING', (p) => p.status === 'RUNNING', key, 40_000);
    expect(cond(running, 'ContainerRunning')).toMatchObject({ status: 'True', reason: 'Running' });
    expect(Date.parse(cond(running, 'ContainerRunning')!.lastTransitionTime)).toBeGreaterThan(Date.parse(since));
    expect((await cp.api(`/v2/pods/${id}`, { method: 'DELETE', key })).status).toBe(204);
  });
});

describe('a drained host', () => {
  test('Schedulable False (Drained) from the drain until the undrain, Reachable untouched; the pod on it keeps running; no new pod is placed', async () => {
    const { id } = await create(cpuPod('cond-drain'));
    const running = await podWhere(id, 'RUNNING', (p) => p.status === 'RUNNING');
    const ready = await hostView();
    expect(cond(ready, 'Schedulable')).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(cond(ready, 'Reachable')).toMatchObject({ status: 'True', reason: 'HeartbeatAnswered' });

    const res = await cp.api(`/v2/hosts/${hostId}/drain`, { method: 'POST', json: { drained: true } });
    const drained = (await res.json()) as Json;
    expect(res.status, JSON.stringify(drained)).toBe(200);
    expect(cond(drained, 'Schedulable')).toMatchObject({ status: 'False', reason: 'Drained', message: 'drained by an operator: takes no new pods; pods on it keep running' });
    expect(cond(drained, 'Reachable')).toEqual(cond(ready, 'Reachable'));
    // the provisioner's heartbeats over a drained host keep the drain's time
    await new Promise((r) => setTimeout(r, 1000));
    expect(cond(await hostView(), 'Schedulable')).toEqual(cond(drained, 'Schedulable'));
    const list = (await (await cp.api('/v2/hosts')).json()) as { hosts: Json[] };
    expect(cond(list.hosts.find((h) => h.id === hostId)!, 'Schedulable')).toMatchObject({ status: 'False', reason: 'Drained' });
    expect(cond(await pod(id), 'ContainerRunning')).toEqual(cond(running, 'ContainerRunning'));
    const refused = await cp.api('/v2/pods', { method: 'POST', json: cpuPod('cond-refused') });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as Json).code).toBe('CAPACITY_UNAVAILABLE');

    const back = (await (await cp.api(`/v2/hosts/${hostId}/drain`, { method: 'POST', json: { drained: false } })).json()) as Json;
    expect(cond(back, 'Schedulable')).toMatchObject({ status: 'True', reason: 'Ready' });
    expect(Date.parse(cond(back, 'Schedulable')!.lastTransitionTime)).toBeGreaterThan(Date.parse(cond(drained, 'Schedulable')!.lastTransitionTime));
    expect((await cp.api(`/v2/pods/${id}`, { method: 'DELETE' })).status).toBe(204);
  });
});

test('/v2/openapi.json: the pod view names conditions and their shape', async () => {
  const doc = (await (await cp.api('/v2/openapi.json', { key: null })).json()) as Json;
  const view = doc.paths['/v2/pods/{id}'].get.responses['200'].content['application/json'].schema;
  expect(view.properties.conditions.items.required).toEqual(['type', 'status', 'reason', 'message', 'lastTransitionTime']);
  expect(view.properties.conditions.items.properties.status.enum).toEqual(['True', 'False', 'Unknown']);
});
