// runpod-python itself (unmodified, ../shared/peers/, driven by runpod_driver.py) against a listening
// control plane with seeded hosts: each test calls the SDK's functions as a user's script does and
// checks what they return or raise, and what REST then shows. Where the SDK hides a detail (it
// raises QueryError with errors[0].message only), the test also posts the SDK's own document (built
// by its own generator function) and checks the GraphQL error itself.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { seedHosts } from '../../harness/fake-hosts.ts';
import { principalFor, raw, type Auth } from './gql-client.ts';
import { RunpodPython } from './runpod-python-client.ts';

const RTX3070 = 'NVIDIA GeForce RTX 3070';
const H100 = 'NVIDIA H100 80GB HBM3';

let cp: TestControlPlane;
let auth: Auth;
let accountId: string;
let py: RunpodPython;

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
  py = await RunpodPython.start(cp.url, acct.key);
});
afterAll(async () => {
  await py?.close();
  await cp?.close();
});

async function rest(path: string): Promise<{ status: number; body: any }> {
  const res = await cp.api(path, { key: auth.key });
  return { status: res.status, body: res.status === 204 ? null : await res.json() };
}

/** The SDK's own document for a call (its generator function, e.g. api.queries.pods.generate_pod_query), posted as-is. */
async function sdkText(generator: string, ...args: unknown[]): Promise<string> {
  return (await py.call(generator, args)) as string;
}

describe('authentication', () => {
  test('a wrong key: the server answers 401 and the SDK raises AuthenticationError; no key at all never leaves the SDK', async () => {
    expect(await py.raises('get_gpus', [], {}, 'gf_not_a_real_key_000000')).toEqual({
      type: 'AuthenticationError',
      message: 'Unauthorized request, please check your API key.',
    });
    expect(await py.raises('get_gpus', [], {}, null)).toEqual({ type: 'AuthenticationError', message: 'No API key provided' });
  });
});

describe('catalog', () => {
  test('get_gpus: every GPU type in the fleet with id, displayName and memoryInGb', async () => {
    expect(await py.call('get_gpus')).toEqual([
      { id: H100, displayName: 'H100 SXM', memoryInGb: 80 },
      { id: RTX3070, displayName: 'RTX 3070', memoryInGb: 8 },
    ]);
  });

  test('get_gpu: one type with tiers, prices and lowestPrice; an unknown id makes the SDK raise ValueError', async () => {
    const gpu = await py.call('get_gpu', [RTX3070, 2]);
    expect(gpu).toMatchObject({ id: RTX3070, displayName: 'RTX 3070', manufacturer: 'Nvidia', memoryInGb: 8, cudaCores: 5888 });
    expect(gpu).toMatchObject({ maxGpuCount: 4, secureCloud: false, communityCloud: true, securePrice: null, communityPrice: 0.13 });
    // spot: the community tier's floor (half its on-demand price, docs/teams.md); no secure host has the type
    expect(gpu).toMatchObject({ oneMonthPrice: null, threeMonthPrice: null, oneWeekPrice: null, communitySpotPrice: 0.065, secureSpotPrice: null });
    // GPUs are free: the lowest bid that places is the floor
    expect(gpu.lowestPrice).toEqual({ minimumBidPrice: 0.065, uninterruptablePrice: 0.13 });
    const none = await py.raises('get_gpu', ['NVIDIA A40']);
    expect(none.type).toBe('ValueError');
    expect(none.message).toContain('No GPU found with the specified ID');
  });
});

describe('pods', () => {
  let gpuPodId: string;
  let cpuPodId: string;

  test('create_pod (GPU, the SDK docs example plus ports and env): what the SDK returns, and REST shows the same pod', async () => {
    const pod = await py.call('create_pod', ['test', 'runpod/stack', RTX3070], { ports: '8888/http', env: { A: '1' } });
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

  test('create_pod (CPU): deployCpuPod with instance_id cpu3c-2-4; the SDK adds templateId runpod-ubuntu, which is not a template here', async () => {
    const pod = await py.call('create_pod', ['cpu', 'runpod/stack'], { instance_id: 'cpu3c-2-4' });
    cpuPodId = pod.id;
    expect(pod).toMatchObject({ imageName: 'runpod/stack', env: [], machineId: 'cpu-host' });
    const { body } = await rest(`/v2/pods/${cpuPodId}`);
    expect(body).toMatchObject({ cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 }, template: null, disk: 10 });
    expect(body.gpu).toBeUndefined();
  });

  test('create_pod with a persistent volume, allowed CUDA versions and a data center', async () => {
    const pod = await py.call('create_pod', ['vol', 'runpod/stack', H100], {
      cloud_type: 'SECURE',
      gpu_count: 2,
      volume_in_gb: 50,
      data_center_id: 'dc-test-1',
      allowed_cuda_versions: ['12.4', '12.5'],
      env: { HF: 'x', B: 'two words' },
    });
    const { body } = await rest(`/v2/pods/${pod.id}`);
    expect(body).toMatchObject({
      gpu: { id: H100, count: 2 },
      cloud: 'SECURE',
      dataCenterId: 'dc-test-1',
      mounts: { persistent: { size: 50, path: '/runpod-volume' } },
      env: { HF: 'x', B: 'two words' },
    });
  });

  test('create_pod with network_volume_id and no data center: the SDK looks the volume up with get_user and sends its data center', async () => {
    const vol = await cp.services.networkVolumes.createFromInput(principalFor(accountId), { name: 'nv-pods', size: 20, dataCenterId: 'dc-test-1' });
    const pod = await py.call('create_pod', ['nv', 'runpod/stack', H100], { network_volume_id: vol.id });
    const { body } = await rest(`/v2/pods/${pod.id}`);
    expect(body).toMatchObject({ dataCenterId: 'dc-test-1', mounts: { network: [{ volumeId: vol.id, path: '/runpod-volume' }] } });
    await cp.api(`/v2/pods/${pod.id}`, { method: 'DELETE', key: auth.key });
  });

  test('get_pods and get_pod: the SDK field set, env as K=V strings, ports as a comma string', async () => {
    const pods = await py.call('get_pods');
    expect(pods.map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining([gpuPodId, cpuPodId]));
    expect(await py.call('get_pod', [gpuPodId])).toEqual({
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
  });

  test('a RUNNING pod: get_pod reports dockerId, uptime and runtime ports (public or not); the schema also answers GPU and container utilisation', async () => {
    const { id } = await py.call('create_pod', ['running', 'runpod/stack', H100], { gpu_count: 2, ports: '8888/http,22/tcp' });
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
    const pod = await py.call('get_pod', [id]);
    expect(pod.dockerId).toBe('c0ffee');
    expect(pod.uptimeSeconds).toBeGreaterThanOrEqual(90);
    expect(pod.runtime).toEqual({
      ports: [
        { ip: '203.0.113.7', isIpPublic: true, privatePort: 8888, publicPort: 40123, type: 'http' },
        { ip: '10.1.2.3', isIpPublic: false, privatePort: 22, publicPort: 40124, type: 'tcp' },
      ],
    });
    // fields the SDK's documents do not select (newer releases and the console read them): plain GraphQL
    const q = await raw(cp.url, auth, {
      query: `query pod { pod(input: {podId: "${id}"}) { uptimeSeconds runtime { uptimeInSeconds gpus { id gpuUtilPercent memoryUtilPercent } container { cpuPercent memoryPercent } }
        machine { gpuDisplayName gpuAvailable maintenanceStart maintenanceEnd maintenanceNote } } }`,
    });
    expect(q.errors).toBeUndefined();
    expect(q.data.pod.runtime.uptimeInSeconds).toBe(q.data.pod.uptimeSeconds);
    const [uuid0, uuid1] = (await cp.services.store.get('pods', id))!.gpuUuids;
    expect(uuid0).toMatch(/^GPU-h100-host-\d$/);
    expect(q.data.pod.runtime.gpus).toEqual([
      { id: uuid0, gpuUtilPercent: 97, memoryUtilPercent: 40 },
      { id: uuid1, gpuUtilPercent: 3, memoryUtilPercent: 1 },
    ]);
    expect(q.data.pod.runtime.container).toEqual({ cpuPercent: 12, memoryPercent: 30 });
    expect(q.data.pod.machine).toEqual({ gpuDisplayName: 'H100 SXM', gpuAvailable: null, maintenanceStart: null, maintenanceEnd: null, maintenanceNote: null });
  });

  test('get_pod of an unknown pod: the SDK raises QueryError with the message; the error is NOT_FOUND at path pod', async () => {
    expect(await py.raises('get_pod', ['nosuchpod'])).toEqual({ type: 'QueryError', message: 'Pod nosuchpod was not found.' });
    const r = await raw(cp.url, auth, { query: await sdkText('api.queries.pods.generate_pod_query', 'nosuchpod') });
    expect(r.status).toBe(200);
    expect(r.data).toEqual({ pod: null });
    expect(r.errors?.[0]).toMatchObject({ message: 'Pod nosuchpod was not found.', path: ['pod'], extensions: { code: 'NOT_FOUND' } });
  });

  test('stop_pod reports EXITED, resume_pod RUNNING, terminate_pod returns None; REST agrees at each step', async () => {
    expect(await py.call('stop_pod', [gpuPodId])).toEqual({ id: gpuPodId, desiredStatus: 'EXITED' });
    expect((await rest(`/v2/pods/${gpuPodId}`)).body).toMatchObject({ status: 'EXITED', cost: 0 });

    // resuming with another GPU count is refused (BAD_REQUEST) and changes nothing
    const wrongCount = await py.raises('resume_pod', [gpuPodId, 2]);
    expect(wrongCount.type).toBe('QueryError');
    const wrongRaw = await raw(cp.url, auth, { query: await sdkText('api.mutations.pods.generate_pod_resume_mutation', gpuPodId, 2) });
    expect(wrongRaw.errors?.[0]).toMatchObject({ message: wrongCount.message, extensions: { code: 'BAD_REQUEST' } });
    expect((await rest(`/v2/pods/${gpuPodId}`)).body.status).toBe('EXITED');

    expect(await py.call('resume_pod', [gpuPodId, 1])).toMatchObject({ id: gpuPodId, desiredStatus: 'RUNNING', imageName: 'runpod/stack', env: ['A=1'], machineId: 'rtx-host' });
    expect((await rest(`/v2/pods/${gpuPodId}`)).body.status).toBe('PROVISIONING');

    // resuming a running pod: INVALID_TRANSITION
    const again = await py.raises('resume_pod', [gpuPodId, 1]);
    expect(again.type).toBe('QueryError');
    const againRaw = await raw(cp.url, auth, { query: await sdkText('api.mutations.pods.generate_pod_resume_mutation', gpuPodId, 1) });
    expect(againRaw.errors?.[0]).toMatchObject({ message: again.message, extensions: { code: 'INVALID_TRANSITION' } });

    expect(await py.attempt('terminate_pod', [gpuPodId])).toEqual({ ok: null });
    expect((await rest(`/v2/pods/${gpuPodId}`)).body.status).toBe('TERMINATED');
    // terminating again is a no-op, like DELETE; an unknown pod is NOT_FOUND
    expect(await py.attempt('terminate_pod', [gpuPodId])).toEqual({ ok: null });
    expect(await py.raises('terminate_pod', ['nosuchpod'])).toEqual({ type: 'QueryError', message: 'Pod nosuchpod was not found.' });
  });

  test('older releases put the key in ?api_key=: the SDK\'s own get_pod and stop_pod documents work that way too', async () => {
    const viaQuery: Auth = { key: auth.key, via: 'query' };
    const get = await raw(cp.url, viaQuery, { query: await sdkText('api.queries.pods.generate_pod_query', cpuPodId) });
    expect(get.errors, JSON.stringify(get)).toBeUndefined();
    expect(get.data.pod.id).toBe(cpuPodId);
    const stop = await raw(cp.url, viaQuery, { query: await sdkText('api.mutations.pods.generate_pod_stop_mutation', cpuPodId) });
    expect(stop.data.podStop).toEqual({ id: cpuPodId, desiredStatus: 'EXITED' });
  });
});

describe('pods from templates (create_pod with template_id)', () => {
  let templateId: string;

  beforeAll(async () => {
    const t = await py.call('create_template', ['from-template', 'me/sleeper:1'], { docker_start_cmd: 'sleep 3600', container_disk_in_gb: 15, ports: '8080/http', env: { MODE: 'tpl' } });
    templateId = t.id;
  });

  test('the SDK always sends dockerArgs: "", which means "not given": the pod keeps the template\'s start command, image, disk and ports', async () => {
    const pod = await py.call('create_pod', ['tpl-gpu'], { gpu_type_id: H100, template_id: templateId });
    const { body } = await rest(`/v2/pods/${pod.id}`);
    expect(body).toMatchObject({ image: 'me/sleeper:1', args: 'sleep 3600', disk: 15, ports: ['8080/http'], env: { MODE: 'tpl' }, template: templateId });
    const viaSdk = await py.call('get_pod', [pod.id]);
    expect(viaSdk).toMatchObject({ dockerArgs: 'sleep 3600', imageName: 'me/sleeper:1', containerDiskInGb: 15 });
    const cpu = await py.call('create_pod', ['tpl-cpu'], { instance_id: 'cpu3c-2-4', template_id: templateId });
    expect((await rest(`/v2/pods/${cpu.id}`)).body).toMatchObject({ image: 'me/sleeper:1', args: 'sleep 3600', template: templateId });
  });

  test('a docker_args the caller gives still replaces the template\'s start command', async () => {
    const pod = await py.call('create_pod', ['tpl-args'], { gpu_type_id: H100, template_id: templateId, docker_args: 'sleep 5' });
    expect((await rest(`/v2/pods/${pod.id}`)).body).toMatchObject({ image: 'me/sleeper:1', args: 'sleep 5' });
  });
});

describe('user', () => {
  test('update_user_settings stores the keys (the SDK escapes newlines); get_user reads them and the network volumes', async () => {
    const vol = await cp.services.networkVolumes.createFromInput(principalFor(accountId), { name: 'data', size: 100, dataCenterId: 'dc-test-2' });
    const keys = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx1 me@laptop\nssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ== ci@build';
    expect(await py.call('update_user_settings', [keys])).toEqual({ id: accountId, pubKey: keys });
    const user = await py.call('get_user');
    expect(user).toEqual({ id: accountId, pubKey: keys, networkVolumes: expect.arrayContaining([{ id: vol.id, name: 'data', size: 100, dataCenterId: 'dc-test-2' }]) });
    const bad = await py.raises('update_user_settings', ['not a key']);
    expect(bad.type).toBe('QueryError');
    const badRaw = await raw(cp.url, auth, { query: await sdkText('api.mutations.user.generate_user_mutation', 'not a key') });
    expect(badRaw.errors?.[0]).toMatchObject({ message: bad.message, extensions: { code: 'VALIDATION_FAILED', errors: ['$.input.pubKey: line 1 is not an OpenSSH public key'] } });
  });
});

describe('templates, endpoints and registry credentials', () => {
  let templateId: string;
  let endpointId: string;

  test('create_template: saveTemplate returns the template (quotes in the start command survive); REST shows it', async () => {
    const t = await py.call('create_template', ['worker', 'me/worker:1'], {
      docker_start_cmd: 'python -c "print(1)"',
      ports: '8000/http, 22/tcp',
      env: { MODEL: 'opt' },
      is_serverless: true,
    });
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

  test('create_endpoint: pool ids in gpu_ids, flashboot as the FLASHBOOT literal, scaler type as a string', async () => {
    const e = await py.call('create_endpoint', ['ep', templateId], { gpu_ids: 'AMPERE_16,ADA_24', flashboot: true, allowed_cuda_versions: '12.4', workers_max: 2 });
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

  test('get_endpoints and update_endpoint_template; an unknown template is VALIDATION_FAILED', async () => {
    expect(await py.call('get_endpoints')).toEqual([
      expect.objectContaining({ id: endpointId, name: 'ep', gpuIds: 'AMPERE_16,ADA_24', templateId, type: 'QUEUE', userId: accountId, version: 0, workersStandby: 0, env: [], networkVolume: null }),
    ]);
    const t2 = (await py.call('create_template', ['worker2', 'me/worker:2'], { is_serverless: true })).id;
    expect(await py.call('update_endpoint_template', [endpointId, t2])).toEqual({ id: endpointId, templateId: t2 });
    const bad = await py.raises('update_endpoint_template', [endpointId, 'tpl_missing']);
    expect(bad.type).toBe('QueryError');
    const badRaw = await raw(cp.url, auth, { query: await sdkText('api.mutations.endpoints.update_endpoint_template_mutation', endpointId, 'tpl_missing') });
    expect(badRaw.errors?.[0]).toMatchObject({ message: bad.message, extensions: { code: 'VALIDATION_FAILED' } });
  });

  test('registry auth: create, update and delete; the password never comes back; deleting twice is NOT_FOUND', async () => {
    const created = await py.call('create_container_registry_auth', ['dockerhub', 'me', 's3cr3t']);
    const id = created.id;
    expect(created).toEqual({ id, name: 'dockerhub' });
    expect(await py.call('update_container_registry_auth', [id, 'me2', 'n3w'])).toEqual({ id, name: 'dockerhub' });
    expect(await cp.services.registries.credentials(accountId, id)).toEqual({ username: 'me2', password: 'n3w' });
    expect(await py.attempt('delete_container_registry_auth', [id])).toEqual({ ok: null });
    expect((await py.raises('delete_container_registry_auth', [id])).type).toBe('QueryError');
    const again = await raw(cp.url, auth, { query: await sdkText('api.mutations.container_register_auth.delete_container_registry_auth', id) });
    expect(again.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});
