// gpufleet without a GPU or a second machine: a whole fleet on this one (gpufleet/testing,
// docs/testing.md). Two sshd test hosts whose fixture nvidia-smi reports two L40S each, a pod of two
// GPUs created through the typed client, a command run in its container, the pod stopped, and
// everything removed. Worker authors and stack authors write their tests the same way.
//   node --import tsx examples/test-fleet.ts    (root, OpenSSH's sshd and a Docker engine; test/testing/example.test.ts runs it)
// Outside this repository the imports are 'gpufleet/testing' and 'gpufleet/client'.
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiClient, PodsApi } from '../client/index.ts';
import { ensureTestImage, FIXTURE_GPUS, startTestFleet } from '../testing/index.ts';

const fleet = await startTestFleet({ hosts: 2, gpus: [FIXTURE_GPUS.L40S, FIXTURE_GPUS.L40S] });
try {
  console.log(`fleet at ${fleet.url}: ${fleet.hosts.map((h) => `${h.id} ${h.name} (${h.address}:${h.port})`).join(', ')}`);
  const pods = new PodsApi(new ApiClient({ url: fleet.url, apiKey: fleet.keys.user }));
  // the test hosts reach no registry: a busybox image made locally with `docker import`
  const image = await ensureTestImage();
  // PID 1 exits on SIGTERM, so stopping it does not wait out the grace period
  const args = `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`;
  let pod = await pods.create({ name: 'example', image, args, disk: 1, gpu: { id: 'NVIDIA L40S', count: 2 } });
  for (const deadline = Date.now() + 120_000; pod.status !== 'RUNNING'; pod = await pods.get(pod.id)) {
    if (Date.now() > deadline) throw new Error(`pod ${pod.id} is ${pod.status}, not RUNNING`);
    await sleep(250);
  }
  console.log(`pod ${pod.id} RUNNING on host ${pod.machineId}`);
  let gpus = '';
  for await (const e of pods.exec(pod.id, ['sh', '-c', 'echo "$NVIDIA_VISIBLE_DEVICES"'])) {
    if (e.event === 'output') gpus += (JSON.parse(e.data) as { text: string }).text;
  }
  console.log(`its GPUs: ${gpus.trim()}`);
  const stopped = await pods.act(pod.id, 'stop');
  console.log(`pod ${pod.id} ${stopped?.status}`);
} finally {
  await fleet.close();
}
console.log('fleet closed');
