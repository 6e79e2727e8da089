// runpod-python's GraphQL functions, sent verbatim (runpod-python-texts.ts) against a listening control
// plane with seeded hosts; each test checks the fields that SDK function reads.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { principalFor, python, type Auth } from './gql-client.ts';
import * as py from './runpod-python-texts.ts';

const RTX3070 = 'NVIDIA GeForce RTX 3070';
const H100 = 'NVIDIA H100 80GB HBM3';

let cp: TestControlPlane;
let auth: Auth;
let accountId: string;

beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [
    { id: 'h100-host', gpus: 8, dataCenterId: 'dc-test-1' },
    { id: 'rtx-host', gpus: 4, gpuTypeId: RTX3070, gpuName: RTX3070, cloud: 'COMMUNITY', dataCenterId: 'dc-test-2', cpuCount: 32, memoryGb: 128 },
    { id: 'cpu-host', gpus: 0 },
  ]);
  const acct = await cp.newAccount('read_write');
  auth = { key: acct.key };
  accountId = acct.accountId;
});
afterAll(async () => cp?.close());

/** The pod runpod-python's docs create (design/runpod-compat.md §1.2, the captured text). */
const gpuPodArgs = (name: string): py.PodDeployArgs => ({
  name,
  imageName: 'runpod/stack',
  cloudType: 'ALL',
  gpuTypeId: RTX3070,
  supportPublicIp: true,
  gpuCount: 1,
  volumeInGb: 0,
  minVcpuCount: 1,
  minMemoryInGb: 1,
  dockerArgs: '',
  containerDiskInGb: 10,
  ports: '8888/http',
  volumeMountPath: '/runpod-volume',
  env: { A: '1' },
});

async function rest(path: string, init: RequestInit & { json?: unknown } = {}) {
  const res = await cp.api(path, { ...init, key: auth.key });
  return { status: res.status, body: res.status === 204 ? null : await res.json() };
}

describe('catalog', () => {
  test('get_gpus: every GPU type in the fleet with id, displayName and memoryInGb', async () => {
    const r = await python(cp.url, auth, py.QUERY_GPU_TYPES);
    expect(r.status).toBe(200);
    expect(r.errors).toBeUndefined();
    expect(r.data.gpuTypes).toEqual([
      { id: H100, displayName: 'H100 SXM', memoryInGb: 80 },
      { id: RTX3070, displayName: 'RTX 3070', memoryInGb: 8 },
    ]);
  });

  test('get_gpu: one type with tiers, prices and lowestPrice; an unknown id gives the empty list the SDK turns into ValueError', async () => {
    const r = await python(cp.url, auth, py.generateGpuQuery(RTX3070, 2));
    expect(r.errors).toBeUndefined();
    const [gpu] = r.data.gpuTypes;
    expect(gpu).toMatchObject({ id: RTX3070, displayName: 'RTX 3070', manufacturer: 'Nvidia', memoryInGb: 8, cudaCores: 5888 });
    expect(gpu).toMatchObject({ maxGpuCount: 4, secureCloud: false, communityCloud: true, securePrice: null, communityPrice: 0.13 });
    expect(gpu).toMatchObject({ oneMonthPrice: null, threeMonthPrice: null, oneWeekPrice: null, communitySpotPrice: null, secureSpotPrice: null });
    expect(gpu.lowestPrice).toEqual({ minimumBidPrice: null, uninterruptablePrice: 0.13 });
    const none = await python(cp.url, auth, py.generateGpuQuery('NVIDIA A40'));
    expect(none.data.gpuTypes).toEqual([]);
  });
});

describe('pods', () => {
  let gpuPodId: string;
  let cpuPodId: string;

  test('create_pod (GPU): podFindAndDeployOnDemand answers what the SDK reads, and REST shows the same pod', async () => {
    const r = await python(cp.url, auth, py.generatePodDeploymentMutation(gpuPodArgs('test')));
    expect(r.errors).toBeUndefined();
    const pod = r.data.podFindAndDeployOnDemand;
    expect(pod).toMatchObject({ imageName: 'runpod/stack', env: ['A=1'], machineId: 'rtx-host' });
    expect(pod.machine.podHostId).toMatch(new RegExp(`^${pod.id}-`));
    gpuPodId = pod.id;
    const { status, body } = await rest(`/v2/pods/${pod.id}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      id: pod.id,
      name: 'test',
      image: 'runpod/stack',
      args: '',
      disk: 10,
      ports: ['8888/http'],
      env: { A: '1' },
      mounts: {},
      gpu: { id: RTX3070, count: 1 },
      // cloudType ALL: the scheduler chose the only tier with this GPU
      cloud: 'COMMUNITY',
      dataCenterId: 'dc-test-2',
      status: 'PROVISIONING',
      cost: 0.13,
    });
  });

  test('create_pod (CPU): deployCpuPod with instanceId cpu3c-2-4 and the SDK default templateId runpod-ubuntu', async () => {
    const r = await python(cp.url, auth, py.generatePodDeploymentMutation({ name: 'cpu', imageName: 'runpod/stack', instanceId: 'cpu3c-2-4', dockerArgs: '', containerDiskInGb: 10, volumeMountPath: '/runpod-volume' }));
    expect(r.errors).toBeUndefined();
    cpuPodId = r.data.deployCpuPod.id;
    expect(r.data.deployCpuPod).toMatchObject({ imageName: 'runpod/stack', env: [], machineId: 'cpu-host' });
    const { body } = await rest(`/v2/pods/${cpuPodId}`);
    expect(body).toMatchObject({ cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 }, template: null, disk: 10 });
    expect(body.gpu).toBeUndefined();
  });

  test('create_pod with a persistent volume, allowed CUDA versions and a data center', async () => {
    const text = py.generatePodDeploymentMutation({
      ...gpuPodArgs('vol'),
      gpuTypeId: H100,
      gpuCount: 2,
      cloudType: 'SECURE',
      volumeInGb: 50,
      dataCenterId: 'dc-test-1',
      allowedCudaVersions: ['12.4', '12.5'],
      env: { HF: 'x', B: 'two words' },
    });
    const r = await python(cp.url, auth, text);
    expect(r.errors).toBeUndefined();
    const { body } = await rest(`/v2/pods/${r.data.podFindAndDeployOnDemand.id}`);
    expect(body).toMatchObject({ gpu: { id: H100, count: 2 }, cloud: 'SECURE', dataCenterId: 'dc-test-1', mounts: { persistent: { size: 50, path: '/runpod-volume' } }, env: { HF: 'x', B: 'two words' } });
  });

  test('get_pods and get_pod: the python field set, env as K=V strings, ports as a comma string', async () => {
    const list = await python(cp.url, auth, py.QUERY_MY_PODS);
    expect(list.errors).toBeUndefined();
    const pods = list.data.myself.pods;
    expect(pods.map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining([gpuPodId, cpuPodId]));
    const one = await python(cp.url, auth, py.generatePodQuery(gpuPodId));
    expect(one.errors).toBeUndefined();
    expect(one.data.pod).toEqual({
      id: gpuPodId,
      containerDiskInGb: 10,
      costPerHr: 0.13,
      desiredStatus: 'RUNNING',
      dockerArgs: '',
      dockerId: null,
      env: ['A=1'],
      gpuCount: 1,
      imageName: 'runpod/stack',
      lastStatusChange: expect.any(String),
      machineId: 'rtx-host',
      // a GPU pod gets its GPUs' share of the host: 32 vCPUs and 128 GB over 4 GPUs
      memoryInGb: 32,
      name: 'test',
      podType: 'RESERVED',
      port: 8888,
      ports: '8888/http',
      uptimeSeconds: 0,
      vcpuCount: 8,
      volumeInGb: 0,
      volumeMountPath: null,
      runtime: null,
      machine: { gpuDisplayName: 'RTX 3070' },
    });
    const cpu = pods.find((p: { id: string }) => p.id === cpuPodId);
    expect(cpu).toMatchObject({ vcpuCount: 2, memoryInGb: 4, gpuCount: 0 });
    const newer = await python(cp.url, auth, py.QUERY_POD_NEWER);
    expect(newer.errors).toBeUndefined();
    expect(newer.data.myself.pods.find((p: { id: string }) => p.id === gpuPodId).machine).toEqual({
      gpuDisplayName: 'RTX 3070',
      gpuAvailable: null,
      maintenanceStart: null,
      maintenanceEnd: null,
      maintenanceNote: null,
    });
  });

  test('a RUNNING pod reports runtime: uptime, ports (public or not), GPU and container utilisation', async () => {
    const r = await python(cp.url, auth, py.generatePodDeploymentMutation({ ...gpuPodArgs('running'), gpuTypeId: H100, gpuCount: 2, ports: '8888/http,22/tcp' }));
    const id = r.data.podFindAndDeployOnDemand.id;
    // what the provisioner records once the container runs (no provisioner runs in this test)
    await cp.services.store.transact(async (tx) => {
      const pod = (await tx.get('pods', id))!;
      tx.put('pods', {
        ...pod,
        status: 'RUNNING',
        observed: {
          containerId: 'c0ffee',
          containerStartedAt: new Date(Date.now() - 90_000).toISOString(),
          ports: [
            { private: 8888, public: 40123, type: 'http', ip: '203.0.113.7' },
            { private: 22, public: 40124, type: 'tcp', ip: '10.1.2.3' },
          ],
          gpus: [{ util: 97, memoryUtil: 40 }, { util: 3, memoryUtil: 1 }],
          cpuUtil: 12,
          memoryUtil: 30,
          observedAt: new Date().toISOString(),
        },
      });
    });
    const q = await python(cp.url, auth, `query pod { pod(input: {podId: "${id}"}) { dockerId uptimeSeconds runtime { uptimeInSeconds ports { ip isIpPublic privatePort publicPort type } gpus { id gpuUtilPercent memoryUtilPercent } container { cpuPercent memoryPercent } } } }`);
    expect(q.errors).toBeUndefined();
    const pod = q.data.pod;
    expect(pod.dockerId).toBe('c0ffee');
    expect(pod.uptimeSeconds).toBeGreaterThanOrEqual(90);
    expect(pod.runtime.uptimeInSeconds).toBe(pod.uptimeSeconds);
    expect(pod.runtime.ports).toEqual([
      { ip: '203.0.113.7', isIpPublic: true, privatePort: 8888, publicPort: 40123, type: 'http' },
      { ip: '10.1.2.3', isIpPublic: false, privatePort: 22, publicPort: 40124, type: 'tcp' },
    ]);
    const [uuid0, uuid1] = (await cp.services.store.get('pods', id))!.gpuUuids;
    expect(uuid0).toMatch(/^GPU-h100-host-\d$/);
    expect(pod.runtime.gpus).toEqual([
      { id: uuid0, gpuUtilPercent: 97, memoryUtilPercent: 40 },
      { id: uuid1, gpuUtilPercent: 3, memoryUtilPercent: 1 },
    ]);
    expect(pod.runtime.container).toEqual({ cpuPercent: 12, memoryPercent: 30 });
  });

  test('get_pod of an unknown pod: errors[0] is NOT_FOUND (the SDK raises QueryError with the message)', async () => {
    const r = await python(cp.url, auth, py.generatePodQuery('nosuchpod'));
    expect(r.status).toBe(200);
    expect(r.data).toEqual({ pod: null });
    expect(r.errors?.[0]).toMatchObject({ message: 'Pod nosuchpod was not found.', path: ['pod'], extensions: { code: 'NOT_FOUND' } });
  });

  test('stop_pod reports EXITED, resume_pod RUNNING, terminate_pod answers podTerminate null; REST agrees at each step', async () => {
    const stop = await python(cp.url, auth, py.generatePodStopMutation(gpuPodId));
    expect(stop.errors).toBeUndefined();
    expect(stop.data.podStop).toEqual({ id: gpuPodId, desiredStatus: 'EXITED' });
    expect((await rest(`/v2/pods/${gpuPodId}`)).body).toMatchObject({ status: 'EXITED', cost: 0 });

    const wrongCount = await python(cp.url, auth, py.generatePodResumeMutation(gpuPodId, 2));
    expect(wrongCount.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
    expect((await rest(`/v2/pods/${gpuPodId}`)).body.status).toBe('EXITED');

    const resume = await python(cp.url, auth, py.generatePodResumeMutation(gpuPodId, 1));
    expect(resume.errors).toBeUndefined();
    expect(resume.data.podResume).toMatchObject({ id: gpuPodId, desiredStatus: 'RUNNING', imageName: 'runpod/stack', env: ['A=1'], machineId: 'rtx-host' });
    expect((await rest(`/v2/pods/${gpuPodId}`)).body.status).toBe('PROVISIONING');

    const again = await python(cp.url, auth, py.generatePodResumeMutation(gpuPodId, 1));
    expect(again.errors?.[0]?.extensions?.code).toBe('INVALID_TRANSITION');

    const term = await python(cp.url, auth, py.generatePodTerminateMutation(gpuPodId));
    expect(term.status).toBe(200);
    expect(term.errors).toBeUndefined();
    expect(term.data).toEqual({ podTerminate: null });
    expect((await rest(`/v2/pods/${gpuPodId}`)).body.status).toBe('TERMINATED');
    // terminating again is a no-op, like DELETE
    expect((await python(cp.url, auth, py.generatePodTerminateMutation(gpuPodId))).errors).toBeUndefined();
    expect((await python(cp.url, auth, py.generatePodTerminateMutation('nosuchpod'))).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  test('the historical ?api_key= URL works for queries and mutations', async () => {
    const viaQuery: Auth = { key: auth.key, via: 'query' };
    expect((await python(cp.url, viaQuery, py.generatePodQuery(cpuPodId))).data.pod.id).toBe(cpuPodId);
    const stop = await python(cp.url, viaQuery, py.generatePodStopMutation(cpuPodId));
    expect(stop.data.podStop).toEqual({ id: cpuPodId, desiredStatus: 'EXITED' });
  });
});

describe('user', () => {
  test('update_user_settings stores the keys (\\n escapes become newlines); get_user reads them and the network volumes', async () => {
    const vol = await cp.services.networkVolumes.createFromInput(principalFor(accountId), { name: 'data', size: 100, dataCenterId: 'dc-test-1' });
    const keys = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx1 me@laptop\\nssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ== ci@build';
    const upd = await python(cp.url, auth, py.generateUserMutation(keys));
    expect(upd.errors).toBeUndefined();
    expect(upd.data.updateUserSettings).toEqual({ id: accountId, pubKey: keys.replace('\\n', '\n') });
    const user = await python(cp.url, auth, py.QUERY_USER);
    expect(user.data.myself).toEqual({
      id: accountId,
      pubKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx1 me@laptop\nssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ== ci@build',
      networkVolumes: [{ id: vol.id, name: 'data', size: 100, dataCenterId: 'dc-test-1' }],
    });
    const bad = await python(cp.url, auth, py.generateUserMutation('not a key'));
    expect(bad.errors?.[0]?.extensions).toEqual({ code: 'VALIDATION_FAILED', errors: ['$.input.pubKey: line 1 is not an OpenSSH public key'] });
  });
});

describe('templates, endpoints and registry credentials', () => {
  let templateId: string;
  let endpointId: string;

  test('create_template: saveTemplate returns the template; REST shows it', async () => {
    const r = await python(
      cp.url,
      auth,
      py.generatePodTemplate({ name: 'worker', imageName: 'me/worker:1', dockerStartCmd: 'python -c "print(1)"', ports: '8000/http, 22/tcp', env: { MODEL: 'opt' }, isServerless: true }),
    );
    expect(r.errors).toBeUndefined();
    const t = r.data.saveTemplate;
    expect(t).toMatchObject({
      name: 'worker',
      imageName: 'me/worker:1',
      dockerArgs: 'python -c "print(1)"',
      containerDiskInGb: 10,
      volumeInGb: 0,
      volumeMountPath: null,
      ports: '8000/http,22/tcp',
      env: [{ key: 'MODEL', value: 'opt' }],
      isServerless: true,
    });
    templateId = t.id;
    const { body } = await rest(`/v2/templates/${templateId}`);
    expect(body).toMatchObject({ image: 'me/worker:1', args: 'python -c "print(1)"', ports: ['8000/http', '22/tcp'], serverless: true, registry: null });
  });

  test('create_endpoint: pool ids in gpuIds, FLASHBOOT as an enum literal, scalerType as a string', async () => {
    const r = await python(cp.url, auth, py.generateEndpointMutation({ name: 'ep', templateId, gpuIds: 'AMPERE_16,ADA_24', flashboot: true, allowedCudaVersions: '12.4', workersMax: 2 }));
    expect(r.errors).toBeUndefined();
    const e = r.data.saveEndpoint;
    expect(e).toMatchObject({
      name: 'ep',
      templateId,
      gpuIds: 'AMPERE_16,ADA_24',
      networkVolumeId: null,
      locations: null,
      idleTimeout: 5,
      scalerType: 'QUEUE_DELAY',
      scalerValue: 4,
      workersMin: 0,
      workersMax: 2,
      allowedCudaVersions: '12.4',
      gpuCount: 1,
      flashBootType: 'FLASHBOOT',
    });
    endpointId = e.id;
    const stored = await cp.services.endpoints.get(principalFor(accountId), endpointId);
    expect(stored.gpuTypeIds).toContain('NVIDIA RTX A4000');
    expect(stored.gpuTypeIds).toContain('NVIDIA GeForce RTX 4090');
    expect(stored.flashboot).toBe(true);
  });

  test('get_endpoints and update_endpoint_template', async () => {
    const list = await python(cp.url, auth, py.QUERY_ENDPOINT);
    expect(list.errors).toBeUndefined();
    expect(list.data.myself.endpoints).toEqual([
      expect.objectContaining({ id: endpointId, name: 'ep', gpuIds: 'AMPERE_16,ADA_24', templateId, type: 'QUEUE', userId: accountId, version: 0, workersStandby: 0, env: [], networkVolume: null }),
    ]);
    const other = await python(cp.url, auth, py.generatePodTemplate({ name: 'worker2', imageName: 'me/worker:2', isServerless: true }));
    const t2 = other.data.saveTemplate.id;
    const upd = await python(cp.url, auth, py.updateEndpointTemplateMutation(endpointId, t2));
    expect(upd.errors).toBeUndefined();
    expect(upd.data.updateEndpointTemplate).toEqual({ id: endpointId, templateId: t2 });
    const bad = await python(cp.url, auth, py.updateEndpointTemplateMutation(endpointId, 'tpl_missing'));
    expect(bad.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
  });

  test('registry auth: save, update and delete; the password never comes back', async () => {
    const created = await python(cp.url, auth, py.generateContainerRegistryAuth('dockerhub', 'me', 's3cr3t'));
    expect(created.errors).toBeUndefined();
    const id = created.data.saveRegistryAuth.id;
    expect(created.data.saveRegistryAuth).toEqual({ id, name: 'dockerhub' });
    const upd = await python(cp.url, auth, py.updateContainerRegistryAuth(id, 'me2', 'n3w'));
    expect(upd.data.updateRegistryAuth).toEqual({ id, name: 'dockerhub' });
    expect(await cp.services.registries.credentials(accountId, id)).toEqual({ username: 'me2', password: 'n3w' });
    const del = await python(cp.url, auth, py.deleteContainerRegistryAuth(id));
    expect(del.errors).toBeUndefined();
    expect(del.data).toEqual({ deleteRegistryAuth: null });
    expect((await python(cp.url, auth, py.deleteContainerRegistryAuth(id))).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
