// `hosts remove` takes what gpufleet left on the host with it (docs/fleet.md "Removing a host"): with a
// real sshd test host, the real Docker engine and the provisioner (account networks kept 10 min after
// their last pod, the default), a forced removal leaves no container labelled for the host and none
// of the account networks: the one of a running pod's account and the one lingering after a pod
// terminated.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { provisioner } from '../../../provisioner/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { disposeHostWorld, enrolTestHost, ensureTestImage, startTestHost, type TestHost } from '../../harness/index.ts';
import { runDocker } from '../../../testing/index.ts';
import { waitFor } from '../../harness/wait-for.ts';

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let image: string;
const SLEEPER = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;

beforeAll(async () => {
  image = await ensureTestImage();
  host = await startTestHost({ name: `remove-${process.pid}` });
  cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300 });
  hostId = await enrolTestHost(cp, host);
}, 180_000);
afterAll(async () => {
  await disposeHostWorld({ cp, host, hostId });
  // whatever the test's failure left
  const { stdout } = await runDocker(['network', 'ls', '-q', '--filter', `label=gpufleet.host=${hostId}`]).catch(() => ({ stdout: '' }));
  for (const n of stdout.split('\n').filter(Boolean)) await runDocker(['network', 'rm', n]).catch(() => undefined);
});

const networks = async () => (await runDocker(['network', 'ls', '--format', '{{.Name}}', '--filter', `label=gpufleet.host=${hostId}`])).stdout.split('\n').filter(Boolean).sort();
const containers = async () => (await runDocker(['ps', '-aq', '--filter', `label=gpufleet.host=${hostId}`])).stdout.split('\n').filter(Boolean);

async function runningPod(key: string, name: string): Promise<string> {
  const res = await cp.api('/v2/pods', { method: 'POST', key, json: { name, image, args: SLEEPER, disk: 1, cpu: { id: 'cpu3c', vcpuCount: 2, memory: 1 } } });
  const body = (await res.json()) as { id: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  await waitFor(`${name} RUNNING`, async () => ((await (await cp.api(`/v2/pods/${body.id}`, { key })).json()) as { status: string }).status === 'RUNNING', 60_000, 100);
  return body.id;
}

test('a forced removal removes the host’s containers and every account network it had', async () => {
  const a = await cp.newAccount('read_write');
  const b = await cp.newAccount('read_write');
  // the test host has room for one such pod at a time
  const gone = await runningPod(b.key, 'terminated-before');
  expect((await cp.api(`/v2/pods/${gone}`, { method: 'DELETE', key: b.key })).status).toBe(204);
  await waitFor('the terminated pod’s container removed', async () => (await containers()).length === 0, 30_000, 100);
  const kept = await runningPod(a.key, 'stays-running');
  // b's network lingers (no pod of b is left here), a's holds a running container
  expect(await networks()).toEqual([`gpufleet-${hostId}-${a.accountId}`, `gpufleet-${hostId}-${b.accountId}`].sort());

  const res = await cp.api(`/v2/hosts/${hostId}?force=true`, { method: 'DELETE' });
  expect(res.status).toBe(204);
  expect(res.headers.get('gpufleet-warning')).toBeNull();
  expect(await containers()).toEqual([]);
  expect(await networks()).toEqual([]);
  const pod = (await (await cp.api(`/v2/pods/${kept}`, { key: a.key })).json()) as { status: string; statusReason: string };
  expect(pod).toMatchObject({ status: 'ERROR', statusReason: `host ${hostId} was removed from the fleet` });
});
