// The fleet admin's path through the real CLI: enroll with progress, list, drain, remove.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { REPO_ROOT, startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { FIXTURE_GPUS, startTestHost, type TestHost } from '../harness/index.ts';

const run = promisify(execFile);
let cp: TestControlPlane;
let h: TestHost;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [path.join(REPO_ROOT, 'bin/gpufleet.js'), ...args], {
      env: { ...process.env, GPUFLEET_URL: cp.url, GPUFLEET_API_KEY: cp.adminKey },
    });
    return { code: 0, ...r };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

beforeAll(async () => {
  h = await startTestHost({ name: `cli-${process.pid}`, gpus: [FIXTURE_GPUS.L40S, FIXTURE_GPUS.L40S] });
  cp = await startTestControlPlane(); // no provisioner: placement only
});
afterAll(async () => {
  await cp?.close();
  await h?.dispose();
});

test('enroll shows progress, then list, drain and remove behave as documented', async () => {
  const enrolled = await cli('hosts', 'enroll', `root@${h.address}:${h.port}`, '--identity', h.privateKeyPath, '--datacenter', 'dc-cli', '--cloud', 'COMMUNITY');
  expect(enrolled.code, enrolled.stderr).toBe(0);
  expect(enrolled.stderr).toContain('connecting to root@');
  expect(enrolled.stderr).toContain(h.hostKeyFingerprint);
  expect(enrolled.stderr).toMatch(/found 2 GPU\(s\) \(NVIDIA L40S\)/);

  const listed = JSON.parse((await cli('hosts', 'list', '--json')).stdout) as { id: string; dataCenterId: string; cloud: string; status: string }[];
  expect(listed).toHaveLength(1);
  const host = listed[0]!;
  expect(host).toMatchObject({ dataCenterId: 'dc-cli', cloud: 'COMMUNITY', status: 'READY' });

  const again = await cli('hosts', 'enroll', `root@${h.address}:${h.port}`, '--identity', h.privateKeyPath);
  expect(again.code).toBe(1);
  expect(again.stderr).toMatch(/already enrolled/);

  const pod = await cp.api('/v2/pods', { method: 'POST', json: { name: 'on-cli-host', image: 'busybox', disk: 1, cloud: 'COMMUNITY', gpu: { id: 'NVIDIA L40S', count: 2 } } });
  expect(pod.status).toBe(201);
  const podId = ((await pod.json()) as { id: string }).id;

  const refused = await cli('hosts', 'remove', host.id);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/still has 1 pod/);

  expect((await cli('hosts', 'drain', host.id)).stdout).toContain('DRAINING');
  const busy = await cp.api('/v2/pods/' + podId + '/action', { method: 'POST', json: { action: 'stop' } });
  expect(busy.status).toBe(200);
  const denied = await cp.api(`/v2/pods/${podId}/action`, { method: 'POST', json: { action: 'start' } });
  expect(denied.status).toBe(400);
  expect(((await denied.json()) as { code: string }).code).toBe('CAPACITY_UNAVAILABLE');

  expect((await cli('hosts', 'remove', host.id, '--force')).code).toBe(0);
  const after = (await (await cp.api(`/v2/pods/${podId}`)).json()) as { status: string; statusReason: string };
  expect(after.status).toBe('ERROR');
  expect(after.statusReason).toMatch(/removed from the fleet/);
  expect(JSON.parse((await cli('hosts', 'list', '--json')).stdout)).toEqual([]);
});
