// A serverless worker's logs and events (issue 13) on real parts: an sshd test host, the real Docker
// engine, the control plane with its provisioner and autoscaler. The worker container prints a line
// and sleeps; its log is read over SSE through GET /v2/serverless/{id}/workers/{workerId}/logs and
// its status changes through GET /v2/events?resourceId=<workerId>, as the endpoint's owner and as
// anyone else (404); and gpufleet_workers counts it.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ADMIN_KEY, startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { dockerBridgeGateway, dockerInspect, ensureTestImage, FIXTURE_GPUS, listContainers, removeContainersByLabel, removeNetworksByLabel, startTestHost, type TestHost } from '../../harness/index.ts';
import { readSse } from '../../harness/sse-reader.ts';
import { parsePrometheusText, samplesOf } from '../../harness/prometheus-text.ts';
import { provisioner } from '../../../provisioner/index.ts';
import { isWorker, type WorkerPod } from '../../../model/index.ts';
import { waitFor as waitForHarness } from '../../harness/wait-for.ts';

const H100 = 'NVIDIA H100 80GB HBM3';
const GREETING = 'hello-from-worker-logs-test';
const SAYS_HELLO = `sh -c 'echo ${GREETING}; trap "exit 0" TERM; sleep 3600 & wait'`;

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let owner: { accountId: string; key: string };
let other: { accountId: string; key: string };
let endpointId = '';
let otherEndpointId = '';
let worker: WorkerPod;

const waitFor = <T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 60_000): Promise<T> => waitForHarness(what, fn, timeoutMs, 150);
const json = async (res: Response) => (await res.json()) as Record<string, any>;
const logsUrl = (ep: string, w: string, query = '') => `${cp.url}/v2/serverless/${ep}/workers/${w}/logs${query}`;
const auth = (key: string) => ({ headers: { authorization: `Bearer ${key}` } });

async function newEndpoint(key: string, body: Record<string, unknown>): Promise<string> {
  const tpl = await cp.api('/v2/templates', { method: 'POST', key, json: { name: `wl-${Math.random()}`, image: body.image, args: SAYS_HELLO, disk: 1, serverless: true } });
  const t = await json(tpl);
  expect(tpl.status, JSON.stringify(t)).toBe(201);
  const res = await cp.api('/v1/endpoints', { method: 'POST', key, json: { gpuTypeIds: [H100], templateId: t.id, workersMin: body.workersMin, workersMax: 1, idleTimeout: 600 } });
  const e = await json(res);
  expect(res.status, JSON.stringify(e)).toBe(200);
  return e.id as string;
}

beforeAll(async () => {
  const image = await ensureTestImage();
  host = await startTestHost({ name: `wlogs-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  cp = await startTestControlPlane({ host: await dockerBridgeGateway(), background: [provisioner()], reconcileIntervalMs: 300 });
  const enrolled = await cp.api('/v2/hosts', { method: 'POST', json: { ssh: `root@${host.address}:${host.port}`, privateKey: host.privateKey, dataCenterId: 'dc-wl' } });
  expect(enrolled.status).toBe(201);
  hostId = (await json(enrolled)).id as string;
  owner = await cp.newAccount();
  other = await cp.newAccount();
  endpointId = await newEndpoint(owner.key, { image, workersMin: 1 });
  otherEndpointId = await newEndpoint(owner.key, { image, workersMin: 0 });
  worker = await waitFor('a running worker container', async () => {
    const w = (await cp.services.store.list('pods', { endpointId })).filter(isWorker).find((p) => p.status === 'RUNNING');
    return w && (await dockerInspect(`gpufleet-${w.id}`))?.State.Running ? w : null;
  });
}, 180_000);

afterAll(async () => {
  if (cp) {
    for (const ep of [endpointId, otherEndpointId]) if (ep) await cp.api(`/v1/endpoints/${ep}`, { method: 'DELETE', key: owner.key }).catch(() => undefined);
    await waitFor('no worker container left', async () => (await listContainers(`gpufleet.host=${hostId}`)).length === 0, 30_000).catch(() => undefined);
    await cp.close();
  }
  if (hostId) {
    await removeContainersByLabel(`gpufleet.host=${hostId}`).catch(() => undefined);
    await removeNetworksByLabel(`gpufleet.host=${hostId}`).catch(() => undefined);
  }
  await host?.dispose();
}, 60_000);

test("the endpoint's owner follows a worker container's output over SSE, as a pod's, and resumes it with Last-Event-ID", async () => {
  const sse = await readSse(logsUrl(endpointId, worker.id, '?source=container'), auth(owner.key));
  try {
    expect(sse.status, sse.text).toBe(200);
    expect(sse.contentType).toMatch(/^text\/event-stream/);
    const e = await sse.next(20_000);
    expect(e.id).toBeTruthy();
    expect(JSON.parse(e.data)).toMatchObject({ source: 'container', stream: 'stdout', line: GREETING });
    // resuming after that line with Last-Event-ID repeats nothing (the container printed nothing since)
    const resumed = await readSse(logsUrl(endpointId, worker.id, '?source=container'), { headers: { authorization: `Bearer ${owner.key}`, 'last-event-id': e.id! } });
    try {
      expect(resumed.status, resumed.text).toBe(200);
      await expect(resumed.next(1_500)).rejects.toThrow(/no event/);
    } finally {
      resumed.close();
    }
  } finally {
    sse.close();
  }
});

test('source=system streams the worker status events as log lines', async () => {
  const sse = await readSse(logsUrl(endpointId, worker.id, '?source=system'), auth(owner.key));
  try {
    expect(sse.status, sse.text).toBe(200);
    const lines: string[] = [];
    while (!lines.some((l) => /RUNNING/.test(l))) lines.push((JSON.parse((await sse.next(10_000)).data) as { line: string }).line);
    expect(lines.at(-1)).toMatch(/RUNNING/);
  } finally {
    sse.close();
  }
});

test("every status change of a worker is an event under the endpoint's owner; anyone else gets 404", async () => {
  const res = await cp.api(`/v2/events?resourceId=${worker.id}`, { key: owner.key });
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  const events = body.events as { resourceType: string; resourceId: string; type: string; status: string; previousStatus: string | null }[];
  expect(events.length).toBeGreaterThanOrEqual(2);
  for (const e of events) expect(e).toMatchObject({ resourceType: 'worker', resourceId: worker.id, type: `worker.${e.status.toLowerCase()}` });
  // a chain: each event's previousStatus is the status before it, from the record's first appearance
  expect(events[0]!.previousStatus).toBeNull();
  for (let i = 1; i < events.length; i++) expect(events[i]!.previousStatus).toBe(events[i - 1]!.status);
  expect(events.at(-1)!.status).toBe('RUNNING');
  // nor does another account's unfiltered listing show it
  expect((await cp.api(`/v2/events?resourceId=${worker.id}`, { key: other.key })).status).toBe(404);
  const others = await json(await cp.api('/v2/events', { key: other.key }));
  expect((others.events as { resourceId: string }[]).filter((e) => e.resourceId === worker.id)).toEqual([]);
});

test("another account's endpoint, a worker of another endpoint, an unknown worker: 404; a bad query: 422", async () => {
  const status = async (url: string, key: string) => {
    const sse = await readSse(url, auth(key));
    sse.close();
    return sse.status;
  };
  expect(await status(logsUrl(endpointId, worker.id), other.key)).toBe(404);
  expect(await status(logsUrl(otherEndpointId, worker.id), owner.key)).toBe(404);
  expect(await status(logsUrl(endpointId, 'no-such-worker'), owner.key)).toBe(404);
  expect(await status(logsUrl('no-such-endpoint', worker.id), owner.key)).toBe(404);
  // a worker is not a pod: the pod route does not show it either
  expect(await status(`${cp.url}/v2/pods/${worker.id}/logs`, owner.key)).toBe(404);
  expect(await status(logsUrl(endpointId, worker.id, '?tail=99999'), owner.key)).toBe(422);
  expect(await status(logsUrl(endpointId, worker.id, '?source=kernel'), owner.key)).toBe(422);
  expect(await status(logsUrl(endpointId, worker.id), '')).toBe(401);
});

test('gpufleet_workers counts the worker container by state: one initializing (it never called the control plane), none elsewhere', async () => {
  const res = await cp.api('/metrics', { key: ADMIN_KEY });
  expect(res.status).toBe(200);
  const m = parsePrometheusText(await res.text());
  const states = (ep: string) => Object.fromEntries(samplesOf(m, 'gpufleet_workers', { endpoint: ep }).map((s) => [s.labels.state, s.value]));
  expect(states(endpointId)).toEqual({ idle: 0, initializing: 1, running: 0, unhealthy: 0, throttled: 0 });
  expect(states(otherEndpointId)).toEqual({ idle: 0, initializing: 0, running: 0, unhealthy: 0, throttled: 0 });
});
