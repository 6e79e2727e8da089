// A realistic gpufleet stack: a dataset volume, a training pod on GPUs that mounts it, a CPU pod for
// data preparation, and a serverless inference endpoint built from a template.
//   npx gpufleet plan            (at the repo root: cdktf.json runs this file)
//   npx gpufleet apply
// GPUFLEET_EXAMPLE_GPU and GPUFLEET_EXAMPLE_DC pick the GPU type and data center; the defaults
// match the test fleet (test/harness/fake-hosts.ts), so tests and a fresh checkout plan the same.
import { App } from 'cdktf';
import { GpufleetStack, NetworkVolume, Pod, ServerlessEndpoint, Template } from '../provider/index.ts';

const gpuType = process.env.GPUFLEET_EXAMPLE_GPU ?? 'NVIDIA H100 80GB HBM3';
const dataCenter = process.env.GPUFLEET_EXAMPLE_DC ?? 'dc-test-1';

const app = new App();
const stack = new GpufleetStack(app, process.env.GPUFLEET_EXAMPLE_STACK ?? 'example');

const datasets = new NetworkVolume(stack, 'datasets', {
  name: 'datasets',
  size: 200,
  dataCenterId: dataCenter,
});

const inferenceImage = new Template(stack, 'inference-template', {
  name: 'llm-inference',
  image: 'ghcr.io/acme/llm-worker:1.4.2',
  serverless: true,
  category: 'NVIDIA',
  disk: 40,
  env: { MODEL_DIR: '/runpod-volume/models', MAX_BATCH: '16' },
});

new Pod(stack, 'trainer', {
  name: 'trainer',
  image: 'pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime',
  args: 'python /workspace/train.py --epochs 20',
  gpu: { id: gpuType, count: 2 },
  disk: 50,
  ports: ['8888/http', '22/tcp'],
  env: { DATA_DIR: '/workspace/data', WANDB_MODE: 'offline' },
  mounts: { network: [{ volumeId: datasets.id, path: '/workspace' }] },
});

new Pod(stack, 'etl', {
  name: 'etl',
  image: 'python:3.12-slim',
  args: 'sleep infinity',
  cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 },
  mounts: { network: [{ volumeId: datasets.id, path: '/data' }] },
});

new ServerlessEndpoint(stack, 'inference', {
  name: 'llm-inference',
  templateId: inferenceImage.id,
  gpuTypeIds: [gpuType],
  workersMin: 0,
  workersMax: 3,
  idleTimeout: 30,
  networkVolumeId: datasets.id,
  dataCenterIds: [dataCenter],
});

app.synth();
