// How a pod becomes a container: name, labels and the `docker run` arguments. Pure, so it is tested
// without a host. GPUs go through the NVIDIA container toolkit's documented path: the `nvidia`
// runtime with NVIDIA_VISIBLE_DEVICES set to the GPUs' UUIDs.
import type { PodRecord } from '../model/pod.ts';
import { volumeHostPath } from '../model/network-volume.ts';

export const LABEL_POD = 'gpufleet.pod';
export const LABEL_HOST = 'gpufleet.host';
export const LABEL_SPEC = 'gpufleet.spec';
export const LABEL_GPUS = 'gpufleet.gpus';

/** Where pod-local (persistent mount) storage lives on a host. */
export const POD_STORAGE_ROOT = process.env.GPUFLEET_POD_STORAGE_ROOT ?? '/var/lib/gpufleet/pods';

export const containerName = (podId: string) => `gpufleet-${podId}`;
export const podStorageDir = (podId: string) => `${POD_STORAGE_ROOT}/${podId}`;

/** A fingerprint of everything that, when changed, needs a new container (not just a start). */
export function specKey(pod: PodRecord): string {
  return `${pod.specGeneration}`;
}

/** Splits `args` like a POSIX shell does for words and quotes (no expansion): the start command. */
export function splitArgs(args: string): string[] {
  const out: string[] = [];
  let cur = '';
  let has = false;
  let q: '"' | "'" | null = null;
  for (let i = 0; i < args.length; i++) {
    const c = args[i]!;
    if (q === "'") {
      if (c === "'") q = null;
      else cur += c;
    } else if (q === '"') {
      if (c === '"') q = null;
      else if (c === '\\' && i + 1 < args.length && '"\\$`'.includes(args[i + 1]!)) cur += args[++i];
      else cur += c;
    } else if (c === "'" || c === '"') {
      q = c;
      has = true;
    } else if (c === '\\' && i + 1 < args.length) {
      cur += args[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) out.push(cur);
      cur = '';
      has = false;
    } else cur += c;
  }
  if (has || cur) out.push(cur);
  return out;
}

export interface RunSpec {
  /** arguments after `docker` */
  argv: string[];
  /** env file content, sent on stdin so values never appear in a command line */
  envFile: string;
  /** host directories to create first */
  dirs: string[];
}

export function runSpec(pod: PodRecord, hostId: string, networkVolumePath: (volumeId: string) => string = volumeHostPath): RunSpec {
  const argv = ['run', '--detach', '--pull', 'never', '--name', containerName(pod.id)];
  argv.push('--label', `${LABEL_POD}=${pod.id}`, '--label', `${LABEL_HOST}=${hostId}`);
  argv.push('--label', `${LABEL_SPEC}=${specKey(pod)}`, '--label', `${LABEL_GPUS}=${pod.gpuUuids.join(',')}`);
  argv.push('--env-file', '/dev/stdin', '--restart', 'no');
  const env: Record<string, string> = { ...pod.env, RUNPOD_POD_ID: pod.id, GPUFLEET_POD_ID: pod.id };
  if (pod.gpu) {
    argv.push('--runtime', 'nvidia');
    env.NVIDIA_VISIBLE_DEVICES = pod.gpuUuids.join(',');
    env.NVIDIA_DRIVER_CAPABILITIES ??= 'compute,utility';
    env.RUNPOD_GPU_COUNT = String(pod.gpu.count);
  }
  if (pod.cpu) argv.push('--cpus', String(pod.cpu.vcpuCount), '--memory', `${pod.cpu.memory}g`);
  for (const p of pod.ports) {
    const [port, proto] = p.split('/');
    argv.push('-p', `${port}/${proto === 'udp' ? 'udp' : 'tcp'}`);
  }
  const dirs: string[] = [];
  if (pod.mounts.persistent) {
    const dir = podStorageDir(pod.id);
    dirs.push(dir);
    argv.push('-v', `${dir}:${pod.mounts.persistent.path}`);
  }
  for (const m of pod.mounts.network ?? []) {
    const dir = networkVolumePath(m.volumeId);
    dirs.push(dir);
    argv.push('-v', `${dir}:${m.path}`);
  }
  argv.push(pod.image, ...splitArgs(pod.args));
  const envFile = Object.entries(env)
    .map(([k, v]) => `${k}=${v.replace(/\n/g, ' ')}`)
    .join('\n');
  return { argv, envFile: envFile + '\n', dirs };
}
