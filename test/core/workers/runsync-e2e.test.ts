// End to end over HTTP: an endpoint whose template is the Node test worker image (the gpufleet worker
// SDK, test/harness/worker-images.ts); `runsync` with plain fetch is COMPLETED by a worker container
// the autoscaler started from zero on a real sshd test host, talking to the control plane over the
// env it was given. Then the endpoint is deleted and the container goes.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { disposeHostWorld, dockerBridgeGateway, dockerInspect, enrolTestHost, FIXTURE_GPUS, startTestHost, type TestHost } from '../../harness/index.ts';
import { ensureNodeWorkerImage } from '../../harness/worker-images.ts';
import { provisioner } from '../../../provisioner/index.ts';
import { isWorker } from '../../../model/index.ts';
import { waitFor as waitForHarness } from '../../harness/wait-for.ts';

let cp: TestControlPlane;
let host: TestHost;
let hostId = '';
let user: { accountId: string; key: string };
let image: string;

const json = async (res: Response) => (await res.json()) as Record<string, any>;
const asUser = (p: string, init: Parameters<TestControlPlane['api']>[1] = {}) => cp.api(p, { key: user.key, ...init });

const waitFor = <T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> => waitForHarness(what, fn, timeoutMs, 150);

beforeAll(async () => {
  image = await ensureNodeWorkerImage();
  host = await startTestHost({ name: `sls-e2e-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  cp = await startTestControlPlane({ host: await dockerBridgeGateway(), background: [provisioner()], reconcileIntervalMs: 300 });
  hostId = await enrolTestHost(cp, host, { dataCenterId: 'dc-sls-e2e' });
  user = await cp.newAccount();
});

afterAll(() => disposeHostWorld({ cp, host, hostId }));

test('runsync on an endpoint with the Node worker image is COMPLETED by a worker container the autoscaler started from zero on a test host', async () => {
  const tpl = await json(await asUser('/v2/templates', { method: 'POST', json: { name: 'node-worker', image, disk: 1, serverless: true } }));
  const created = await asUser('/v1/endpoints', {
    method: 'POST',
    json: { templateId: tpl.id, name: 'e2e', gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 0, workersMax: 1, idleTimeout: 30 },
  });
  const ep = await json(created);
  expect(created.status, JSON.stringify(ep)).toBe(200);
  expect((await cp.services.store.list('pods', { endpointId: ep.id })).length).toBe(0);

  const t0 = Date.now();
  const cold = await asUser(`/v2/${ep.id}/runsync?wait=120000`, { method: 'POST', json: { input: { output: { hello: 'gpufleet' } } } });
  const coldBody = await json(cold);
  const coldMs = Date.now() - t0;
  expect(cold.status, JSON.stringify(coldBody)).toBe(200);
  expect(coldBody).toMatchObject({ status: 'COMPLETED', output: { hello: 'gpufleet' } });
  const workers = (await cp.services.store.list('pods', { endpointId: ep.id })).filter(isWorker);
  expect(workers.map((w) => w.id)).toEqual([coldBody.workerId]);
  expect(workers[0]!.hostId).toBe(hostId);
  const c = await dockerInspect(`gpufleet-${coldBody.workerId}`);
  expect(c?.State.Running).toBe(true);
  expect(c?.Config.Image).toBe(image);

  const t1 = Date.now();
  const warm = await json(await asUser(`/v2/${ep.id}/runsync`, { method: 'POST', json: { input: { n: 2 } } }));
  const warmMs = Date.now() - t1;
  expect(warm).toMatchObject({ status: 'COMPLETED', output: { echo: { n: 2 } }, workerId: coldBody.workerId });

  // the worker has called: it is listed as ready under its endpoint
  const shown = await json(await asUser(`/v1/endpoints/${ep.id}?includeWorkers=true`));
  expect(shown.workers).toEqual([expect.objectContaining({ id: coldBody.workerId, status: expect.stringMatching(/^(IDLE|RUNNING)$/) })]);
  console.log(`[runsync-e2e] cold runsync (worker started from zero): ${coldMs} ms (delayTime ${coldBody.delayTime} ms); warm: ${warmMs} ms`);

  expect((await asUser(`/v1/endpoints/${ep.id}`, { method: 'DELETE' })).status).toBe(204);
  await waitFor('the worker container removed', async () => (await dockerInspect(`gpufleet-${coldBody.workerId}`)) === null, 20_000);
});
