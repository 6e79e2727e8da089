// GET /v2/pods/{id}/logs end to end (issue 13): a real sshd test host, the real Docker engine, the
// control plane with its provisioner, and a client reading server-sent events over HTTP.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../../harness/control-plane.ts';
import { disposeHostWorld, enrolTestHost, ensureTestImage, FIXTURE_GPUS, startTestHost, type TestHost } from '../../../harness/index.ts';
import { parsePrometheusText, sampleValue, samplesOf } from '../../../harness/prometheus-text.ts';
import { readSse, type SseEvent, type SseStream } from '../../../harness/sse-reader.ts';
import { provisioner } from '../../../../provisioner/index.ts';
import { waitFor as waitForHarness } from '../../../harness/wait-for.ts';

const run = promisify(execFile);
let cp: TestControlPlane;
let host: TestHost;
let hostId: string;
let image: string;
let user: { accountId: string; key: string };
const pods: Record<string, string> = {};

// 30 lines on stdout, one on stderr, then quiet (and quick to stop). The pause before the stderr
// line keeps it last both in docker's log file and by timestamp: stdout and stderr are two streams,
// and docker stamps each when its copier reads it, so lines written back to back on the two can land
// in the file in one order and carry timestamps in the other (CI saw exactly that).
const PRINTER = `sh -c 'i=1; while [ $i -le 30 ]; do echo line-$i; i=$((i+1)); done; sleep 0.3; echo to-stderr >&2; trap "exit 0" TERM; sleep 3600 & wait'`;
// a numbered line every 50 ms, for as long as it runs
const TICKER = `sh -c 'trap "exit 0" TERM; i=0; while true; do i=$((i+1)); echo tick-$i; sleep 0.05; done'`;

const waitFor = <T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> => waitForHarness(what, fn, timeoutMs, 100);

async function createPod(name: string, args: string): Promise<string> {
  const res = await cp.api('/v2/pods', { key: user.key, method: 'POST', json: { name, image, args, disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 } } });
  const body = (await res.json()) as { id: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  await waitFor(`${name} RUNNING`, async () => ((await (await cp.api(`/v2/pods/${body.id}`, { key: user.key })).json()) as { status: string }).status === 'RUNNING');
  return body.id;
}

const logs = (id: string, query = '', headers: Record<string, string> = {}, key = user.key): Promise<SseStream> =>
  readSse(`${cp.url}/v2/pods/${id}/logs${query ? `?${query}` : ''}`, { headers: { authorization: `Bearer ${key}`, ...headers } });

interface LogData {
  source: string;
  stream?: string;
  line: string;
  ts: string;
}
const data = (e: SseEvent) => JSON.parse(e.data) as LogData;

/** the `docker logs --follow` processes (and their wrapper shells) reading this pod's container */
async function followers(podId: string): Promise<string[]> {
  const r = await run('pgrep', ['-f', '--', `docker logs --follow .*gpufleet-${podId}`]).catch((e: { code?: number; stdout?: string }) => {
    if (e.code === 1) return { stdout: '' };
    throw e;
  });
  return r.stdout.split('\n').filter(Boolean);
}

beforeAll(async () => {
  image = await ensureTestImage();
  host = await startTestHost({ name: `logs-${process.pid}`, gpus: [0, 1, 2, 3].map((i) => ({ ...FIXTURE_GPUS.H100_80GB_HBM3, utilizationGpu: 20 + i, utilizationMemory: 60 + i })) });
  cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300, metricsIntervalMs: 500 });
  hostId = await enrolTestHost(cp, host, { dataCenterId: 'dc-logs' });
  user = await cp.newAccount('read_write');
  pods.printer = await createPod('printer', PRINTER);
  pods.ticker = await createPod('ticker', TICKER);
});

afterAll(() => disposeHostWorld({ cp, host, hostId }));

describe('pod logs', () => {
  test("a busybox pod's printed lines arrive as events with source, stream, line and a timestamp id, in order", async () => {
    const s = await logs(pods.printer!, 'source=container');
    expect(s.status).toBe(200);
    expect(s.contentType).toMatch(/^text\/event-stream/);
    const got: SseEvent[] = [];
    while (got.length < 31) got.push(await s.next());
    s.close();
    const stdout = got.filter((e) => data(e).stream === 'stdout').map((e) => data(e).line);
    expect(stdout).toEqual(Array.from({ length: 30 }, (_, i) => `line-${i + 1}`));
    const err = got.find((e) => data(e).stream === 'stderr');
    expect(data(err!)).toMatchObject({ source: 'container', line: 'to-stderr' });
    for (const e of got) {
      expect(data(e).ts).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
      expect(e.id === data(e).ts || e.id?.startsWith(`${data(e).ts}#`), e.id).toBe(true);
    }
  });

  test('tail=N sends only the last N lines before following', async () => {
    const s = await logs(pods.printer!, 'source=container&tail=3');
    try {
      const got = [await s.next(), await s.next(), await s.next()].map((e) => data(e).line);
      expect(got).toEqual(['line-29', 'line-30', 'to-stderr']);
      await expect(s.next(1_500)).rejects.toThrow(/no event/);
    } finally {
      s.close();
    }
    const none = await logs(pods.printer!, 'source=container&tail=0');
    await expect(none.next(1_000)).rejects.toThrow(/no event/);
    none.close();
  });

  test('Last-Event-ID resumes right after the last event seen: no line repeated, none skipped', async () => {
    const first = await logs(pods.ticker!, 'source=container&tail=5');
    const seen: SseEvent[] = [];
    for (let i = 0; i < 12; i++) seen.push(await first.next());
    first.close();
    const last = seen.at(-1)!;
    const n = Number(/^tick-(\d+)$/.exec(data(last).line)![1]);
    // the ticker goes on printing while nobody reads
    await new Promise((r) => setTimeout(r, 500));
    const again = await logs(pods.ticker!, 'source=container&tail=100', { 'last-event-id': last.id! });
    const resumed: string[] = [];
    for (let i = 0; i < 20; i++) resumed.push(data(await again.next()).line);
    again.close();
    expect(resumed).toEqual(Array.from({ length: 20 }, (_, i) => `tick-${n + 1 + i}`));
  });

  test('the SSH channel and the docker logs process on the host end when the client disconnects', async () => {
    const s = await logs(pods.printer!, 'source=container');
    try {
      for (let i = 0; i < 31; i++) await s.next();
      // quiet now: docker logs waits for output that will not come, and nothing it writes would fail
      expect(await followers(pods.printer!)).not.toEqual([]);
      expect(cp.services.sshPool.openStreams(hostId)).toBe(1);
    } finally {
      s.close();
    }
    await waitFor('docker logs gone from the host', async () => (await followers(pods.printer!)).length === 0, 10_000);
    await waitFor('the stream channel closed', async () => cp.services.sshPool.openStreams(hostId) === 0, 10_000);
  });

  test("another account's pod is 404; a bad tail, since, source or Last-Event-ID is 422 before anything runs on the host", async () => {
    const other = await cp.newAccount('read');
    const s = await logs(pods.printer!, '', {}, other.key);
    expect(s.status).toBe(404);
    expect(s.contentType).toMatch(/^application\/problem\+json/);
    for (const [query, headers] of [
      ['tail=5001', {}],
      ['tail=-1', {}],
      ['since=yesterday', {}],
      ['since=2025-01-01T00:00:00Z%20--until=x', {}],
      ['source=host', {}],
      ['', { 'last-event-id': '--since=0' }],
    ] as const) {
      const r = await logs(pods.printer!, query, headers);
      expect(r.status, `${query} ${JSON.stringify(headers)}`).toBe(422);
    }
    expect(await followers(pods.printer!)).toEqual([]);
  });

  test('HEAD on the logs route is 405 and starts nothing on the host', async () => {
    const res = await cp.api(`/v2/pods/${pods.printer}/logs`, { key: user.key, method: 'HEAD' });
    expect(res.status).toBe(405);
    expect(await followers(pods.printer!)).toEqual([]);
    expect(cp.services.sshPool.openStreams(hostId)).toBe(0);
  });

  test("source=system streams the pod's events; the provisioner is the actor of RUNNING", async () => {
    const s = await logs(pods.printer!, 'source=system');
    const first = data(await s.next());
    expect(first).toMatchObject({ source: 'system' });
    expect(first.line).toMatch(/^new → PROVISIONING/);
    const lines = [first.line];
    while (!lines.some((l) => l.includes('→ RUNNING'))) lines.push(data(await s.next()).line);
    expect(lines.find((l) => l.includes('→ RUNNING'))).toMatch(/\(by provisioner\)$/);
    s.close();
    const res = await cp.api(`/v2/events?resourceId=${pods.printer}`, { key: user.key });
    const events = ((await res.json()) as { events: { status: string; actor: string }[] }).events;
    expect(events.find((e) => e.status === 'RUNNING')?.actor).toBe('provisioner');
  });

  test('follow=false sends the tail, then an end event, and leaves no docker logs running, while the container keeps printing', async () => {
    const s = await logs(pods.ticker!, 'source=container&tail=3&follow=false');
    expect(s.status).toBe(200);
    const rest = await s.rest(20_000);
    expect(rest.map((e) => e.event)).toEqual(['message', 'message', 'message', 'end']);
    expect(rest.slice(0, 3).map((e) => data(e).line)).toEqual(rest.slice(0, 3).map((e) => expect.stringMatching(/^tick-\d+$/)));
    expect(s.ended).toBe(true);
    // both sources: the kept events and the container's tail, then the end, though the pod runs on
    const both = await (await logs(pods.ticker!, 'tail=2&follow=false')).rest(20_000);
    expect(both.at(-1)?.event).toBe('end');
    expect(both.filter((e) => e.event === 'message' && data(e).source === 'container')).toHaveLength(2);
    expect(both.some((e) => e.event === 'message' && data(e).source === 'system')).toBe(true);
    expect(await followers(pods.ticker!)).toEqual([]);
    expect((await logs(pods.ticker!, 'follow=maybe')).status).toBe(422);
  });

  test('the stream ends with an end event when the pod stops', async () => {
    const s = await logs(pods.ticker!, 'source=container&tail=1');
    await s.next();
    expect((await cp.api(`/v2/pods/${pods.ticker}/action`, { key: user.key, method: 'POST', json: { action: 'stop' } })).status).toBe(200);
    const rest = await s.rest(30_000);
    expect(rest.at(-1)?.event).toBe('end');
    expect(s.ended).toBe(true);
  });
});

describe('metrics from the provisioner', () => {
  test("GPU utilization gauges are the host's nvidia-smi samples; reconcile passes and SSH commands are timed", async () => {
    const scrape = async () => parsePrometheusText(await (await cp.api('/metrics')).text());
    const families = await waitFor('GPU samples', async () => {
      const f = await scrape();
      return samplesOf(f, 'gpufleet_gpu_utilization_ratio', { host: hostId }).length === 4 ? f : null;
    });
    for (const i of [0, 1, 2, 3]) {
      expect(sampleValue(families, 'gpufleet_gpu_utilization_ratio', { host: hostId, gpu: String(i) })).toBeCloseTo((20 + i) / 100, 5);
      expect(sampleValue(families, 'gpufleet_gpu_memory_utilization_ratio', { host: hostId, gpu: String(i) })).toBeCloseTo((60 + i) / 100, 5);
    }
    expect(sampleValue(families, 'gpufleet_reconcile_duration_seconds_count')).toBeGreaterThan(0);
    expect(sampleValue(families, 'gpufleet_ssh_command_duration_seconds_count')).toBeGreaterThan(0);
    expect(sampleValue(families, 'gpufleet_gpus', { type: 'NVIDIA H100 80GB HBM3', datacenter: 'dc-logs', state: 'allocated' })).toBe(1);
    expect(samplesOf(families, 'gpufleet_ssh_failures_total', { host: hostId })).toEqual([]);
  });
});

describe('a pod whose host does not answer', () => {
  test('is a 503 at once, not a hang: before and after the host is marked unreachable', async () => {
    await host.stop();
    const started = Date.now();
    const s = await logs(pods.printer!, 'source=container');
    expect(s.status).toBe(503);
    expect(Date.now() - started).toBeLessThan(12_000);
    await waitFor('host UNREACHABLE', async () => ((await (await cp.api(`/v2/hosts/${hostId}`)).json()) as { status: string }).status === 'UNREACHABLE');
    const t0 = Date.now();
    const again = await logs(pods.printer!, 'source=container');
    expect(again.status).toBe(503);
    expect(JSON.parse(again.text)).toMatchObject({ status: 503, code: 'UNAVAILABLE' });
    expect(Date.now() - t0).toBeLessThan(1_000);
    // each heartbeat that found no sshd was an SSH failure of this host
    const families = parsePrometheusText(await (await cp.api('/metrics')).text());
    expect(sampleValue(families, 'gpufleet_ssh_failures_total', { host: hostId })).toBeGreaterThanOrEqual(3);
    expect(sampleValue(families, 'gpufleet_hosts', { state: 'UNREACHABLE' })).toBe(1);
  });
});
