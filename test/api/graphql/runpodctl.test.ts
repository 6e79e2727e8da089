// runpodctl's variable-style documents (runpodctl-texts.ts): `{"query", "variables"}`, empty strings sent
// as-is, Go zero values for unset numbers. Each test checks what the CLI decodes.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { seedHosts } from '../../harness/fake-hosts.ts';
import { principalFor, runpodctl, type Auth } from './gql-client.ts';
import * as ctl from './runpodctl-texts.ts';

const H100 = 'NVIDIA H100 80GB HBM3';
const A4000 = 'NVIDIA RTX A4000';

let cp: TestControlPlane;
let auth: Auth;
let accountId: string;

beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [
    { id: 'h100-a', gpus: 8, dataCenterId: 'US-TX-1', cudaVersion: '12.4' },
    { id: 'h100-b', gpus: 8, dataCenterId: 'EU-RO-1', cudaVersion: '12.8', cloud: 'COMMUNITY' },
    { id: 'a4000', gpus: 2, gpuTypeId: A4000, gpuName: A4000, dataCenterId: 'EU-RO-1', cudaVersion: '12.2' },
  ]);
  const acct = await cp.newAccount('read_write');
  auth = { key: acct.key };
  accountId = acct.accountId;
});
afterAll(async () => cp?.close());

/** legacy `runpodctl create pod` input: every key present, empty strings as-is, env may be null */
const legacyInput = (name: string) => ({
  cloudType: 'SECURE',
  containerDiskInGb: 20,
  deployCost: 3.5,
  dockerArgs: '',
  dataCenterId: '',
  env: null,
  gpuCount: 1,
  gpuTypeId: H100,
  imageName: 'runpod/pytorch:2.1',
  minMemoryInGb: 16,
  minVcpuCount: 4,
  name,
  networkVolumeId: '',
  ports: '8888/http,22/tcp',
  supportPublicIp: true,
  startSsh: true,
  templateId: '',
  volumeInGb: 0,
  volumeMountPath: '/workspace',
});

describe('pods', () => {
  let podId: string;

  test('createPod ($input, legacy keys): id, costPerHr, desiredStatus, lastStatusChange', async () => {
    const r = await runpodctl(cp.url, auth, ctl.CREATE_POD_LEGACY, { input: legacyInput('legacy') });
    expect(r.status).toBe(200);
    expect(r.errors).toBeUndefined();
    expect(r.data.podFindAndDeployOnDemand).toMatchObject({ costPerHr: 2.99, desiredStatus: 'RUNNING', lastStatusChange: expect.any(String) });
    podId = r.data.podFindAndDeployOnDemand.id;
    const res = await cp.api(`/v2/pods/${podId}`, { key: auth.key });
    expect(await res.json()).toMatchObject({ name: 'legacy', cloud: 'SECURE', ports: ['8888/http', '22/tcp'], env: {}, dataCenterId: 'US-TX-1', disk: 20 });
  });

  test('createPod (current CLI): minCudaVersion keeps the pod off hosts with an older CUDA', async () => {
    const input = { cloudType: 'ALL', containerDiskInGb: 10, gpuCount: 2, gpuTypeId: H100, imageName: 'img', name: 'cuda', ports: '22/tcp', minCudaVersion: '12.6', env: [{ key: 'K', value: 'V' }] };
    const r = await runpodctl(cp.url, auth, ctl.CREATE_POD, { input });
    expect(r.errors).toBeUndefined();
    expect(r.data.podFindAndDeployOnDemand).toMatchObject({
      name: 'cuda',
      imageName: 'img',
      desiredStatus: 'RUNNING',
      gpuCount: 2,
      containerDiskInGb: 10,
      volumeInGb: 0,
      ports: '22/tcp',
      env: ['K=V'],
      machine: { gpuDisplayName: 'H100 SXM', location: 'EU-RO-1' },
    });
    const tooNew = await runpodctl(cp.url, auth, ctl.CREATE_POD, { input: { ...input, name: 'cuda2', minCudaVersion: '13.0' } });
    expect(tooNew.errors?.[0]?.extensions?.code).toBe('PLACEMENT_IMPOSSIBLE');
  });

  test('legacy GetPods with the PortType alias and machine.location', async () => {
    const r = await runpodctl(cp.url, auth, ctl.GET_PODS_LEGACY);
    expect(r.errors).toBeUndefined();
    const pod = r.data.myself.pods.find((p: { id: string }) => p.id === podId);
    expect(pod).toMatchObject({ name: 'legacy', env: [], ports: '8888/http,22/tcp', gpuCount: 1, vcpuCount: 8, memoryInGb: 64, machine: { gpuDisplayName: 'H100 SXM', location: 'US-TX-1' }, runtime: null });
  });

  test('stopPod, podResume (no gpuCount) and terminatePod with $podId', async () => {
    const stop = await runpodctl(cp.url, auth, ctl.STOP_POD, { podId });
    expect(stop.data.podStop).toMatchObject({ id: podId, desiredStatus: 'EXITED', lastStatusChange: expect.stringContaining('stopped by user') });
    const resume = await runpodctl(cp.url, auth, ctl.RESUME_POD, { podId });
    expect(resume.errors).toBeUndefined();
    expect(resume.data.podResume).toMatchObject({ id: podId, desiredStatus: 'RUNNING', costPerHr: 2.99 });
    const bid = await runpodctl(cp.url, auth, ctl.BID_RESUME_POD, { podId, bidPerGpu: 0.5, gpuCount: 1 });
    // an on-demand pod is not started with a bid (spot pods: test/api/graphql/interruptible-pods.test.ts)
    expect(bid.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_REQUEST' }, message: expect.stringContaining('only an interruptible pod is started with a bid') });
    const term = await runpodctl(cp.url, auth, ctl.TERMINATE_POD, { podId });
    expect(term.status).toBe(200);
    expect(term.data).toHaveProperty('podTerminate', null);
    const res = await cp.api(`/v2/pods/${podId}`, { key: auth.key });
    expect(((await res.json()) as { status: string }).status).toBe('TERMINATED');
  });
});

describe('catalog', () => {
  test('gpu list: gpuTypes plus dataCenters stock (High|Medium|Low|None), and the serverless pools', async () => {
    const types = await runpodctl(cp.url, auth, ctl.LIST_GPU_TYPES);
    expect(types.errors).toBeUndefined();
    expect(types.data.gpuTypes).toEqual([
      { id: H100, displayName: 'H100 SXM', memoryInGb: 80, secureCloud: true, communityCloud: true, securePrice: 2.99, communityPrice: 2.69 },
      { id: A4000, displayName: 'RTX A4000', memoryInGb: 16, secureCloud: true, communityCloud: false, securePrice: 0.25, communityPrice: null },
    ]);
    const dcs = await runpodctl(cp.url, auth, ctl.LIST_DATA_CENTERS);
    expect(dcs.errors).toBeUndefined();
    expect(dcs.data.dataCenters).toEqual([
      { id: 'EU-RO-1', name: 'EU-RO-1', location: 'EU-RO-1', gpuAvailability: expect.arrayContaining([{ gpuTypeId: A4000, displayName: 'RTX A4000', stockStatus: 'Low' }]) },
      { id: 'US-TX-1', name: 'US-TX-1', location: 'US-TX-1', gpuAvailability: [{ gpuTypeId: H100, displayName: 'H100 SXM', stockStatus: 'Medium' }] },
    ]);
    const pools = await runpodctl(cp.url, auth, ctl.LIST_SERVERLESS_GPU_POOLS);
    expect(pools.data.serverlessGpuPools).toContainEqual({ id: 'AMPERE_16', gpuTypeIds: expect.arrayContaining([A4000, 'Tesla T4']) });
  });

  test('legacy `get cloud`: lowestPrice over every type with $input', async () => {
    const r = await runpodctl(cp.url, auth, ctl.LOWEST_PRICE, { input: { gpuCount: 2, secureCloud: null, minMemoryInGb: 8, minVcpuCount: 2, totalDisk: 20 } });
    expect(r.errors).toBeUndefined();
    expect(r.data.gpuTypes).toEqual([
      // GPUs free: the lowest bid is the cheapest tier's spot floor, half its on-demand price (docs/teams.md)
      { lowestPrice: { gpuName: 'H100 SXM', gpuTypeId: H100, minimumBidPrice: 1.345, uninterruptablePrice: 2.69, minMemory: 128, minVcpu: 16 } },
      { lowestPrice: { gpuName: 'RTX A4000', gpuTypeId: A4000, minimumBidPrice: 0.125, uninterruptablePrice: 0.25, minMemory: 512, minVcpu: 64 } },
    ]);
    const secure = await runpodctl(cp.url, auth, `query { gpuTypes(input: {id: "${H100}"}) { lowestPrice(input: {gpuCount: 8, secureCloud: true}) { uninterruptablePrice stockStatus availableGpuCounts } } }`);
    expect(secure.data.gpuTypes[0].lowestPrice).toMatchObject({ uninterruptablePrice: 2.99, stockStatus: expect.stringMatching(/^(High|Medium|Low|None)$/) });
  });
});

describe('user, volumes, templates, endpoints', () => {
  test('user: account fields; ssh add-key reads pubKey then writes keys joined by a blank line', async () => {
    const user = await runpodctl(cp.url, auth, ctl.GET_USER);
    expect(user.errors).toBeUndefined();
    expect(user.data.myself).toMatchObject({ id: accountId, email: expect.stringContaining('@test.local'), spendLimit: null, notifyLowBalance: false });
    // 100 credits less what the pods have accrued; the running 2×H100 COMMUNITY pod costs 2 × 2.69 an hour
    expect(user.data.myself.clientBalance).toBeGreaterThan(99);
    expect(user.data.myself.clientBalance).toBeLessThan(100);
    expect(user.data.myself.currentSpendPerHr).toBe(5.38);
    const before = await runpodctl(cp.url, auth, ctl.GET_PUBLIC_SSH_KEYS);
    expect(before.data.myself).toEqual({ id: accountId, pubKey: '' });
    const keys = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA1 a@b\n\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA2 c@d';
    const upd = await runpodctl(cp.url, auth, ctl.UPDATE_USER_SETTINGS, { input: { pubKey: keys } });
    expect(upd.errors).toBeUndefined();
    expect(upd.data.updateUserSettings).toEqual({ id: accountId });
    expect((await runpodctl(cp.url, auth, ctl.GET_PUBLIC_SSH_KEYS)).data.myself.pubKey).toBe(keys);
  });

  test('getNetworkVolumes', async () => {
    const vol = await cp.services.networkVolumes.createFromInput(principalFor(accountId), { name: 'v', size: 20, dataCenterId: 'EU-RO-1' });
    const r = await runpodctl(cp.url, auth, ctl.GET_NETWORK_VOLUMES);
    expect(r.data.myself.networkVolumes).toEqual([{ dataCenterId: 'EU-RO-1', id: vol.id, name: 'v', size: 20 }]);
  });

  test('templates: saveTemplate, podTemplates, podTemplate, and saveTemplate with an id (the port-label round trip)', async () => {
    const input = { name: 'tpl', imageName: 'me/img:1', containerDiskInGb: 15, dockerArgs: '', env: [{ key: 'A', value: 'b' }], ports: '8888/http', volumeInGb: 0, volumeMountPath: '', isServerless: false, startSsh: true, startJupyter: false, readme: '# hi' };
    const saved = await runpodctl(cp.url, auth, ctl.SAVE_TEMPLATE, { input });
    expect(saved.errors).toBeUndefined();
    const t = saved.data.saveTemplate;
    expect(t).toMatchObject({ advancedStart: false, containerDiskInGb: 15, dockerArgs: '', env: [{ key: 'A', value: 'b' }], imageName: 'me/img:1', name: 'tpl', ports: '8888/http', readme: '# hi', startJupyter: false, startScript: null, startSsh: true, volumeInGb: 0 });
    const list = await runpodctl(cp.url, auth, ctl.POD_TEMPLATES, { input: { isRunpod: false } });
    expect(list.data.podTemplates).toEqual([expect.objectContaining({ id: t.id, isRunpod: false, isPublic: false, category: 'NVIDIA' })]);
    expect((await runpodctl(cp.url, auth, ctl.POD_TEMPLATES, { input: { isRunpod: true } })).data.podTemplates).toEqual([]);
    const one = await runpodctl(cp.url, auth, ctl.GET_TEMPLATE, { id: t.id });
    expect(one.data.podTemplate).toMatchObject({ id: t.id, ports: '8888/http', portsConfig: [], containerRegistryAuthId: null });
    const roundTrip = { ...input, id: t.id, containerRegistryAuthId: '', ports: '8888/http,22/tcp', env: [], portsConfig: [{ port: '8888', name: 'lab' }], isPublic: false, advancedStart: false };
    const upd = await runpodctl(cp.url, auth, `mutation UpdateTemplatePortLabels($input: SaveTemplateInput) { saveTemplate(input: $input) { id ports env { key } } }`, { input: roundTrip });
    expect(upd.errors).toBeUndefined();
    expect(upd.data.saveTemplate).toEqual({ id: t.id, ports: '8888/http,22/tcp', env: [] });
  });

  test('serverless create (current CLI): pools from serverlessGpuPools, FLASHBOOT as a string, one network volume; then the full-replace round trip', async () => {
    const tpl = await runpodctl(cp.url, auth, ctl.SAVE_TEMPLATE, { input: { name: 'sls', imageName: 'me/sls:1', isServerless: true, containerDiskInGb: 10 } });
    const templateId = tpl.data.saveTemplate.id;
    const vol = await cp.services.networkVolumes.createFromInput(principalFor(accountId), { name: 'models', size: 50, dataCenterId: 'EU-RO-1' });
    const input = { name: 'sls-ep', templateId, gpuIds: 'AMPERE_16', gpuCount: 1, workersMin: 0, workersMax: 2, networkVolumeIds: [{ networkVolumeId: vol.id }], idleTimeout: 30, scalerType: 'REQUEST_COUNT', scalerValue: 2, executionTimeoutMs: 120000, flashBootType: 'FLASHBOOT' };
    const r = await runpodctl(cp.url, auth, ctl.SAVE_ENDPOINT, { input });
    expect(r.errors).toBeUndefined();
    const e = r.data.saveEndpoint;
    expect(e).toMatchObject({
      name: 'sls-ep',
      templateId,
      gpuIds: 'AMPERE_16',
      instanceIds: [],
      computeType: 'GPU',
      networkVolumeId: vol.id,
      networkVolumeIds: [{ networkVolumeId: vol.id, dataCenterId: 'EU-RO-1' }],
      idleTimeout: 30,
      scalerType: 'REQUEST_COUNT',
      scalerValue: 2,
      workersMax: 2,
      executionTimeoutMs: 120000,
      flashBootType: 'FLASHBOOT',
      modelReferences: [],
      minCudaVersion: null,
    });
    // UpdateEndpointModels: the whole config again, flashBootType "" and Go zero values
    const replace = { id: e.id, name: 'sls-ep', templateId, gpuIds: 'AMPERE_16,' + H100, gpuCount: 1, instanceIds: null, workersMin: 0, workersMax: 3, locations: '', networkVolumeId: '', networkVolumeIds: [], idleTimeout: 30, scalerType: 'QUEUE_DELAY', scalerValue: 4, executionTimeoutMs: 0, minCudaVersion: '', flashBootType: '', modelReferences: [] };
    const rep = await runpodctl(cp.url, auth, ctl.SAVE_ENDPOINT, { input: replace });
    expect(rep.errors).toBeUndefined();
    expect(rep.data.saveEndpoint).toMatchObject({ id: e.id, gpuIds: `AMPERE_16,${H100}`, workersMax: 3, networkVolumeId: null, scalerType: 'QUEUE_DELAY', executionTimeoutMs: 600000 });
    // a full replace: fields left out take their defaults, so flashboot is back off
    expect(rep.data.saveEndpoint.flashBootType).toBe('OFF');
    const legacy = await runpodctl(cp.url, auth, ctl.SAVE_ENDPOINT_LEGACY, { input: { name: 'legacy-ep', templateId, gpuIds: 'ADA_24', networkVolumeId: '', locations: 'EU-RO-1', idleTimeout: 5, scalerType: 'QUEUE_DELAY', scalerValue: 4, workersMin: 0, workersMax: 1, flashBootType: 'OFF', modelReferences: [] } });
    expect(legacy.errors).toBeUndefined();
    expect(legacy.data.saveEndpoint).toMatchObject({ gpuIds: 'ADA_24', locations: 'EU-RO-1', userId: accountId });
    const tpl2 = await runpodctl(cp.url, auth, ctl.SAVE_TEMPLATE, { input: { name: 'sls2', imageName: 'me/sls:2', isServerless: true } });
    const moved = await runpodctl(cp.url, auth, ctl.UPDATE_ENDPOINT_TEMPLATE, { input: { endpointId: e.id, templateId: tpl2.data.saveTemplate.id } });
    expect(moved.data.updateEndpointTemplate).toEqual({ id: e.id, templateId: tpl2.data.saveTemplate.id });
    const unknownPool = await runpodctl(cp.url, auth, ctl.SAVE_ENDPOINT, { input: { ...input, name: 'x', gpuIds: 'NOT_A_POOL' } });
    expect(unknownPool.errors?.[0]?.extensions?.errors).toEqual(['$.gpuTypeIds[0]: unknown GPU type or pool "NOT_A_POOL" (see GET /v2/catalog/gpus)']);
  });

  test('the ?api_key= URL older runpodctl releases used', async () => {
    const r = await runpodctl(cp.url, { key: auth.key, via: 'query' }, ctl.GET_PUBLIC_SSH_KEYS);
    expect(r.status).toBe(200);
    expect(r.data.myself.id).toBe(accountId);
  });
});
