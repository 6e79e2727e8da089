// POST /v2/pods/{id}/exec end to end (issue 13): a real sshd test host, the real Docker engine, the
// control plane with its provisioner; the output read as server-sent events, and `gpufleet pods exec`.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../../harness/control-plane.ts';
import { disposeHostWorld, enrolTestHost, ensureTestImage, FIXTURE_GPUS, startTestHost, type TestHost } from '../../../harness/index.ts';
import { readSse, type SseEvent } from '../../../harness/sse-reader.ts';
import { provisioner } from '../../../../provisioner/index.ts';
import { runCli } from '../../../cli/run-cli.ts';
import { waitFor as waitForHarness } from '../../../harness/wait-for.ts';

const run = promisify(execFile);
let cp: TestControlPlane;
let host: TestHost;
let hostId: string;
let image: string;
let user: { accountId: string; key: string };
let podId: string;

const IDLE = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;

const waitFor = <T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> => waitForHarness(what, fn, timeoutMs, 100);

async function createPod(name: string, key = user.key): Promise<string> {
  const res = await cp.api('/v2/pods', { key, method: 'POST', json: { name, image, args: IDLE, disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 } } });
  const body = (await res.json()) as { id: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  await waitFor(`${name} RUNNING`, async () => ((await (await cp.api(`/v2/pods/${body.id}`, { key })).json()) as { status: string }).status === 'RUNNING');
  return body.id;
}

/** runs argv in the pod; the stdout, stderr and exit code the events carried */
async function exec(id: string, command: unknown, key = user.key): Promise<{ status: number; text: string; stdout: string; stderr: string; code: number | null; events: SseEvent[] }> {
  const s = await readSse(`${cp.url}/v2/pods/${id}/exec`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ command }),
  });
  if (s.status !== 200) return { status: s.status, text: s.text, stdout: '', stderr: '', code: null, events: [] };
  const events = await s.rest(20_000);
  let stdout = '';
  let stderr = '';
  let code: number | null = null;
  for (const e of events) {
    const d = JSON.parse(e.data) as { stream?: string; text?: string; code?: number };
    if (e.event === 'output') d.stream === 'stderr' ? (stderr += d.text) : (stdout += d.text);
    if (e.event === 'exit') code = d.code ?? null;
  }
  return { status: 200, text: '', stdout, stderr, code, events };
}

beforeAll(async () => {
  image = await ensureTestImage();
  host = await startTestHost({ name: `exec-${process.pid}`, gpus: [0, 1].map(() => ({ ...FIXTURE_GPUS.H100_80GB_HBM3 })) });
  cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300 });
  hostId = await enrolTestHost(cp, host, { dataCenterId: 'dc-exec' });
  user = await cp.newAccount('read_write');
  podId = await createPod('exec-target');
}, 180_000);

afterAll(() => disposeHostWorld({ cp, host, hostId }));

describe('pod exec', () => {
  test('echo hi: its stdout arrives as an output event, then exit 0; the exec is an event of the pod', async () => {
    const r = await exec(podId, ['echo', 'hi']);
    expect(r.status).toBe(200);
    expect(r.stdout).toBe('hi\n');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.events.at(-1)?.event).toBe('exit');
    const ev = (await (await cp.api(`/v2/events?resourceId=${podId}`, { key: user.key })).json()) as { events: { type: string; reason: string | null }[] };
    expect(ev.events.some((e) => e.type === 'pod.exec' && e.reason === `exec "echo" (1 argument, sha256:${createHash('sha256').update('["hi"]').digest('hex')})`)).toBe(true);
  }, 30_000);

  test('argv words arrive literally: no docker option, no shell expansion, spaces and quotes kept', async () => {
    const words = ['--privileged', '$(id)', '`id`', 'a b', "it's", '; touch /tmp/pwned', '-u', 'tab\there'];
    const r = await exec(podId, ['printf', '[%s]\\n', ...words]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(words.map((w) => `[${w}]\n`).join(''));
    expect((await exec(podId, ['test', '-e', '/tmp/pwned'])).code).toBe(1);
    // a first word that looks like a docker option is the program: docker cannot run it, nothing privileged runs
    const opt = await exec(podId, ['--privileged', 'id']);
    expect(opt.code).not.toBe(0);
    expect(opt.stdout + opt.stderr).toMatch(/exec failed|not found/);
    expect(opt.stdout).not.toMatch(/uid=/);
  }, 30_000);

  test("the command's exit code and its stderr come through", async () => {
    const r = await exec(podId, ['sh', '-c', 'echo out; echo err >&2; exit 7']);
    expect(r).toMatchObject({ stdout: 'out\n', stderr: 'err\n', code: 7 });
  }, 30_000);

  test('gpufleet pods exec prints the output and exits with the command exit code', async () => {
    const r = await runCli(['pods', 'exec', podId, '--', 'sh', '-c', 'echo "from $0"; exit 3', '--not-an-option'], { url: cp.url, key: user.key });
    expect(r.stdout).toBe('from --not-an-option\n');
    expect(r.code).toBe(3);
    const ok = await runCli(['pods', 'exec', podId, '--', 'echo', 'hi'], { url: cp.url, key: user.key });
    expect(ok).toMatchObject({ code: 0, stdout: 'hi\n' });
  }, 30_000);

  test("another account's pod is 404, a read key 403, a bad body 422, nothing run", async () => {
    const other = await cp.newAccount('read_write');
    expect((await exec(podId, ['touch', '/tmp/by-other'], other.key)).status).toBe(404);
    expect((await exec('no-such-pod', ['true'])).status).toBe(404);
    const reader = (await cp.services.keys.createKey({ accountId: user.accountId, name: 'reader', scope: 'read' })).key;
    expect((await exec(podId, ['touch', '/tmp/by-reader'], reader)).status).toBe(403);
    for (const bad of [[], ['a\u0000b'], ['echo', 'line\nbreak'], ['esc\u001b[2J'], 'echo hi', [1], ['x'.repeat(8193)], ['']]) {
      const r = await exec(podId, bad);
      expect({ bad, status: r.status }).toEqual({ bad, status: 422 });
    }
    const r = await exec(podId, ['sh', '-c', 'ls /tmp/by-other /tmp/by-reader 2>/dev/null | wc -l']);
    expect(r.stdout.trim()).toBe('0');
  }, 30_000);

  test('a client that goes mid-command stops the docker exec on the host (no process left)', async () => {
    const marker = `exec-gone-${process.pid}`;
    const s = await readSse(`${cp.url}/v2/pods/${podId}/exec`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ command: ['sh', '-c', 'echo started; sleep 600', marker] }),
    });
    expect(s.status).toBe(200);
    expect(JSON.parse((await s.next(10_000)).data)).toMatchObject({ stream: 'stdout', text: 'started\n' });
    const execs = async () =>
      (await run('pgrep', ['-f', '--', `docker exec -- gpufleet-${podId} sh -c .*${marker}`]).catch((e: { code?: number }) => {
        if (e.code === 1) return { stdout: '' };
        throw e;
      })).stdout.split('\n').filter(Boolean);
    expect((await execs()).length).toBeGreaterThan(0);
    s.close();
    await waitFor('docker exec gone', async () => (await execs()).length === 0, 10_000);
  }, 30_000);

  test('a pod that is not RUNNING is 409', async () => {
    const id = await createPod('exec-stopped');
    const stop = await cp.api(`/v2/pods/${id}/action`, { method: 'POST', key: user.key, json: { action: 'stop' } });
    expect(stop.status).toBe(200);
    const r = await exec(id, ['echo', 'hi']);
    expect(r.status).toBe(409);
    expect(JSON.parse(r.text)).toMatchObject({ status: 409 });
  }, 60_000);
});
