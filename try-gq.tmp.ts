import { startTestControlPlane } from '/work/main/test/harness/control-plane.ts';
import { seedHosts } from '/work/main/test/harness/fake-hosts.ts';
const cp = await startTestControlPlane();
await seedHosts(cp.services.store, [{ gpus: 8 }, { gpus: 4, gpuTypeId: 'NVIDIA GeForce RTX 3070', gpuName: 'NVIDIA GeForce RTX 3070', cloud: 'COMMUNITY', dataCenterId: 'dc-test-2' }, { gpus: 0, id: 'cpu-host' }]);
const { key } = await cp.newAccount();
const q = async (query: string, variables?: unknown) => {
  const r = await fetch(cp.url + '/graphql', { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(variables ? { query, variables } : { query }) });
  const t = await r.text();
  console.log(r.status, t.slice(0, 1500));
  return JSON.parse(t);
};
await q('query GpuTypes { gpuTypes { id displayName memoryInGb } }');
const c = await q(`mutation {
  podFindAndDeployOnDemand(
    input: {
      name: "test", imageName: "runpod/stack", cloudType: ALL, startSsh: true, gpuTypeId: "NVIDIA GeForce RTX 3070", supportPublicIp: true, gpuCount: 1, volumeInGb: 0, minVcpuCount: 1, minMemoryInGb: 1, dataCenterId: null, dockerArgs: "", containerDiskInGb: 10, ports: "8888/http", volumeMountPath: "/runpod-volume", env: [{ key: "A", value: "1" }]
    }
  ) { id imageName env machineId machine { podHostId } }
}`);
const id = c.data.podFindAndDeployOnDemand.id;
await q(`query pod { pod(input: {podId: "${id}"}) { id containerDiskInGb costPerHr desiredStatus dockerArgs dockerId env gpuCount imageName lastStatusChange machineId memoryInGb name podType port ports uptimeSeconds vcpuCount volumeInGb volumeMountPath runtime { ports { ip isIpPublic privatePort publicPort type } } machine { gpuDisplayName location } } }`);
await q(`query pod { pod(input: {podId: "nope"}) { id } }`);
await q(`query { gpuTypes(input: {id: "NVIDIA GeForce RTX 3070"}) { id lowestPrice(input: {gpuCount: 1}) { minimumBidPrice uninterruptablePrice stockStatus availableGpuCounts minVcpu minMemory } } }`);
await q(`{ a { b } }`);
await q(`mutation { deployCpuPod( input: { name: "cpu", imageName: "runpod/stack", cloudType: ALL, startSsh: true, instanceId: "cpu3c-2-4", dataCenterId: null, dockerArgs: "", containerDiskInGb: 10, volumeMountPath: "/runpod-volume", templateId: "runpod-ubuntu" } ) { id imageName env machineId machine { podHostId } } }`);
console.log((await cp.api('/v2/pods/' + id, { key })).status);
await cp.close();
