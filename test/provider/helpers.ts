// Shared by the provider tests: a listening control plane with fake GPU/CPU hosts, stacks synthesized
// in-process (new App + app.synth(), read back from the outdir like the CLI does), and engine options.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { App } from 'cdktf';
import { ApiClient } from '../../client/api-client.ts';
import { GpufleetStack, NetworkVolume, Pod, ServerlessEndpoint, Template } from '../../provider/index.ts';
import { readSynthDir, type DesiredStack } from '../../provider/engine/synth.ts';
import { captureReporter } from '../../provider/engine/reporter.ts';
import type { RunOptions } from '../../provider/engine/run.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';

export const GPU = 'NVIDIA H100 80GB HBM3';
export const DC = 'dc-test-1';
export const DC2 = 'dc-test-2';

/** Four 8-GPU hosts and a CPU host in dc-test-1, one GPU host in dc-test-2. Nothing dials them. */
export async function startFleet(): Promise<TestControlPlane> {
  const cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [
    ...Array.from({ length: 4 }, () => ({ gpus: 8 })),
    { gpus: 0, id: 'cpu-host', cpuCount: 128, memoryGb: 1024 },
    { gpus: 8, dataCenterId: DC2 },
  ]);
  return cp;
}

/** An account of its own per test, so tests share the control plane without sharing state. */
export async function apiFor(cp: TestControlPlane): Promise<ApiClient> {
  const { key } = await cp.newAccount('read_write', 100_000);
  return new ApiClient({ url: cp.url, apiKey: key });
}

export async function synthStack(name: string, build: (stack: GpufleetStack) => void): Promise<DesiredStack> {
  const outdir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-test-synth-'));
  try {
    const app = new App({ outdir });
    build(new GpufleetStack(app, name));
    app.synth();
    const [stack] = await readSynthDir(outdir);
    return stack!;
  } finally {
    await rm(outdir, { recursive: true, force: true });
  }
}

export function engineOptions(api: ApiClient, extra: Partial<RunOptions> = {}): RunOptions & { output: string[]; lines: string[] } {
  const output: string[] = [];
  const reporter = captureReporter();
  return { api, reporter, out: (t) => void output.push(t), autoApprove: true, wait: false, output, lines: reporter.lines, ...extra };
}

export interface PodView {
  id: string;
  name: string;
  status: string;
  statusReason: string | null;
  image: string;
  env: Record<string, string>;
  gpu?: { id: string; count: number };
  registry: string | null;
  mounts: { network?: { volumeId: string; path: string }[]; persistent?: { size: number; path: string } };
  tags: Record<string, string>;
}

export async function listPods(api: ApiClient): Promise<PodView[]> {
  return (await api.get<{ pods: PodView[] }>('/v2/pods')).pods;
}

export interface Knobs {
  image?: string;
  gpuCount?: number;
  cpuFlavor?: string;
  mountPath?: string;
  volumeSize?: number;
  workersMax?: number;
  env?: Record<string, string>;
  /** leave the CPU pod out (its deletion is then planned) */
  withoutCpuPod?: boolean;
  /** the endpoint's workers mount the volume too */
  endpointOnVolume?: boolean;
}

/** A small stack with one of each kind; knobs change one field at a time. */
export function testStack(name: string, k: Knobs = {}): Promise<DesiredStack> {
  return synthStack(name, (s) => {
    const vol = new NetworkVolume(s, 'data', { name: 'data', size: k.volumeSize ?? 50, dataCenterId: DC });
    const tpl = new Template(s, 'worker', { name: 'worker', image: 'worker:1', serverless: true });
    new Pod(s, 'trainer', {
      name: 'trainer',
      image: k.image ?? 'trainer:1',
      gpu: { id: GPU, count: k.gpuCount ?? 1 },
      env: k.env ?? { STAGE: 'dev' },
      mounts: { network: [{ volumeId: vol.id, path: k.mountPath ?? '/data' }] },
    });
    if (!k.withoutCpuPod) new Pod(s, 'cpu', { name: 'cpu', image: 'etl:1', cpu: { id: k.cpuFlavor ?? 'cpu3c', vcpuCount: 2, memory: 4 } });
    new ServerlessEndpoint(s, 'ep', {
      name: 'ep',
      templateId: tpl.id,
      gpuTypeIds: [GPU],
      workersMax: k.workersMax ?? 2,
      ...(k.endpointOnVolume ? { networkVolumeId: vol.id } : {}),
    });
  });
}
