// Truthful in-between states (docs/pods.md#stopping, #changes-in-progress), with a real sshd test
// host, the real Docker engine and the provisioner:
// - a stop answers EXITED; while the container runs its SIGTERM handler (4 s here, within the 10 s
//   grace), statusReason and ContainerRunning (Stopping) say so; a start in that time waits for it
//   (the handler finishes: its last words are in the log, exit 0), says why (WaitingForStop), then
//   the pod runs at once;
// - an env change on a running pod answers RUNNING with the reason and ContainerRunning Updating until
//   the new container runs; a stack's apply of an env change returns only once the new container runs.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiClient } from '../../client/api-client.ts';
import { captureReporter } from '../../provider/engine/reporter.ts';
import { runApply } from '../../provider/engine/run.ts';
import { Pod } from '../../provider/index.ts';
import { provisioner } from '../../provisioner/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { disposeHostWorld, dockerInspect, enrolTestHost, ensureTestImage, startTestHost, type TestHost } from '../harness/index.ts';
import { runDocker } from '../../testing/index.ts';
import { waitFor } from '../harness/wait-for.ts';
import { synthStack } from '../provider/helpers.ts';
import type { PodCondition as Condition } from '../../model/index.ts';

type Json = Record<string, any>;

let image: string;
let hostId = '';
let host: TestHost;
let cp: TestControlPlane;
const SLEEPER = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
/** a SIGTERM handler that takes 4 s to save its work, then says so and exits 0 */
const SAVER = `sh -c 'trap "sleep 4; echo saved-work; exit 0" TERM; echo started; sleep 3600 & wait'`;
const HANDLER_MS = 4000;
/** what a loaded machine may add (a reconcile pass, an SSH round trip, docker start) */
const SLACK_MS = 5000;

beforeAll(async () => {
  image = await ensureTestImage();
  host = await startTestHost({ name: `between-${process.pid}` });
  cp = await startTestControlPlane({ background: [provisioner({ networkLingerMs: 0 })], reconcileIntervalMs: 300 });
  hostId = await enrolTestHost(cp, host);
}, 180_000);
afterAll(async () => disposeHostWorld({ cp, host, hostId }));

const cond = (view: Json, type = 'ContainerRunning'): Condition | undefined => (view.conditions as Condition[]).find((c) => c.type === type);
const pod = async (id: string) => (await (await cp.api(`/v2/pods/${id}`)).json()) as Json;
async function podWhere(id: string, what: string, ok: (p: Json) => boolean, timeoutMs = 30_000): Promise<Json> {
  let last: Json = {};
  return waitFor(what, async () => {
    last = await pod(id);
    return ok(last) ? last : null;
  }, timeoutMs, 50).catch((err: unknown) => {
    throw new Error(`${String(err)}; the pod reads ${last.status}: ${last.statusReason} ${JSON.stringify(last.conditions)}`);
  });
}
async function create(json: Json): Promise<Json> {
  const res = await cp.api('/v2/pods', { method: 'POST', json });
  const body = (await res.json()) as Json;
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body;
}
const action = async (id: string, a: string) => {
  const res = await cp.api(`/v2/pods/${id}/action`, { method: 'POST', json: { action: a } });
  expect(res.status).toBe(200);
  return (await res.json()) as Json;
};
const cpuPod = (name: string, over: Json = {}) => ({ name, image, args: SLEEPER, disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 1 }, ...over });
const containerEnv = async (id: string) => (await dockerInspect(`gpufleet-${id}`))?.Config.Env ?? [];

describe('stop grace period', () => {
  test('stop answers EXITED, the grace shows as Stopping; a start in it waits for the handler to finish, says why, then runs at once', async () => {
    const { id } = await create(cpuPod('grace', { args: SAVER }));
    await podWhere(id, 'RUNNING', (p) => p.status === 'RUNNING');
    await waitFor('the handler installed', async () => (await runDocker(['logs', `gpufleet-${id}`])).stdout.includes('started'));

    const stopped = await action(id, 'stop');
    const stopAt = Date.now();
    expect(stopped).toMatchObject({ status: 'EXITED', desiredStatus: 'EXITED' });
    const stopping = await podWhere(id, 'the grace period shown', (p) => cond(p)?.reason === 'Stopping', HANDLER_MS);
    expect(stopping.status).toBe('EXITED');
    expect(stopping.statusReason).toMatch(/^stopping: the container was sent SIGTERM at \S+ and has up to 10 s to exit before it is killed; its GPUs are released$/);
    expect(cond(stopping)).toMatchObject({ status: 'True', message: 'the container was sent SIGTERM and has up to 10 s to exit' });
    expect((await dockerInspect(`gpufleet-${id}`))?.State.Running).toBe(true);

    // a start while the handler still saves its work
    expect(Date.now() - stopAt).toBeLessThan(HANDLER_MS);
    const started = await action(id, 'start');
    expect(started.statusReason).toMatch(new RegExp(`^placed on host ${hostId}; waiting for its previous container to finish its stop grace period \\(stopping since \\S+\\), then starting at once$`));
    expect(cond(started)).toMatchObject({ status: 'False', reason: 'WaitingForStop' });

    const running = await podWhere(id, 'RUNNING again', (p) => p.status === 'RUNNING' && cond(p)?.reason === 'Running', HANDLER_MS + SLACK_MS + 10_000);
    const runningAt = Date.now();
    // the handler was not cut short: its last words are in the container's log, and it took its 4 s
    expect((await runDocker(['logs', `gpufleet-${id}`])).stdout).toContain('saved-work');
    expect(runningAt - stopAt).toBeGreaterThanOrEqual(HANDLER_MS);
    // and the new start came at once after it
    expect(runningAt - stopAt).toBeLessThan(HANDLER_MS + SLACK_MS);
    expect(running.statusReason).toBeNull();
    expect((await cp.api(`/v2/pods/${id}`, { method: 'DELETE' })).status).toBe(204);
  });

  test('a stop with nothing to wait for ends Stopped, the reason says the container stopped', async () => {
    const { id } = await create(cpuPod('grace-quick'));
    await podWhere(id, 'RUNNING', (p) => p.status === 'RUNNING');
    await action(id, 'stop');
    const after = await podWhere(id, 'the stop recorded', (p) => p.statusReason === 'container stopped; GPUs released');
    expect(cond(after)).toMatchObject({ status: 'False', reason: 'Stopped' });
    expect((await cp.api(`/v2/pods/${id}`, { method: 'DELETE' })).status).toBe(204);
  });
});

describe('a change to a running pod', () => {
  test('PATCH env answers RUNNING with the reason and Updating until the new container runs with it', async () => {
    const { id } = await create(cpuPod('env-change', { env: { STAGE: 'one' } }));
    await podWhere(id, 'RUNNING', (p) => p.status === 'RUNNING');
    const before = (await dockerInspect(`gpufleet-${id}`))?.Id;
    const res = await cp.api(`/v2/pods/${id}`, { method: 'PATCH', json: { env: { STAGE: 'two' } } });
    const patched = (await res.json()) as Json;
    expect(res.status).toBe(200);
    expect(patched.status).toBe('RUNNING');
    expect(patched.statusReason).toBe('applying the change to env: the old container runs until the new one has started');
    expect(cond(patched)).toMatchObject({ status: 'True', reason: 'Updating' });
    const done = await podWhere(id, 'the new container running', (p) => p.status === 'RUNNING' && cond(p)?.reason === 'Running');
    expect(done.statusReason).toBeNull();
    expect(await containerEnv(id)).toContain('STAGE=two');
    expect((await dockerInspect(`gpufleet-${id}`))?.Id).not.toBe(before);
    expect((await cp.api(`/v2/pods/${id}`, { method: 'DELETE' })).status).toBe(204);
  });

  test("a stack's apply of an env change returns once the new container runs", async () => {
    const { key } = await cp.newAccount('read_write', 1000);
    const api = new ApiClient({ url: cp.url, apiKey: key });
    const stack = (stage: string) =>
      synthStack('between', (s) => new Pod(s, 'p', { name: 'between-p', image, args: SLEEPER, disk: 1, env: { STAGE: stage }, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 1 } }));
    const opts = { api, reporter: captureReporter(), out: () => undefined, autoApprove: true, wait: true, pollMs: 100, waitTimeoutMs: 60_000 };
    const created = await runApply(await stack('one'), opts);
    expect(created.applied?.ok, created.applied?.errors.join('\n')).toBe(true);
    const id = created.applied!.ids.p!;
    const changed = await runApply(await stack('two'), opts);
    expect(changed.applied?.ok, changed.applied?.errors.join('\n')).toBe(true);
    // the moment apply returns, the pod runs its new container
    const now = (await (await cp.api(`/v2/pods/${id}`, { key })).json()) as Json;
    expect(now.status).toBe('RUNNING');
    expect(cond(now)).toMatchObject({ reason: 'Running' });
    expect(await containerEnv(id)).toContain('STAGE=two');
    expect((await cp.api(`/v2/pods/${id}`, { method: 'DELETE', key })).status).toBe(204);
  });
});

describe('a container ended from outside gpufleet, at the moment the test names', () => {
  test('docker kill on a running pod: EXITED, the reason says SIGKILL from outside, not "exited on its own"', async () => {
    const { id } = await create(cpuPod('killed-outside'));
    await podWhere(id, 'RUNNING', (p) => p.status === 'RUNNING');
    await runDocker(['kill', `gpufleet-${id}`]);
    const after = await podWhere(id, 'the kill recorded', (p) => p.status === 'EXITED');
    expect(after.statusReason).toBe('container was killed with SIGKILL (exit code 137) outside gpufleet: docker kill or docker rm on the host, or the kernel');
    expect(cond(after)).toMatchObject({ status: 'False', reason: 'Killed', message: 'the container was killed by a signal gpufleet did not send (exit code 137)' });
    expect((await cp.api(`/v2/pods/${id}`, { method: 'DELETE' })).status).toBe(204);
  });
});
