// How a pod becomes a container: name, labels and the `docker run` arguments. Pure, so it is tested
// without a host. GPUs go through the NVIDIA container toolkit's documented path: the `nvidia`
// runtime with NVIDIA_VISIBLE_DEVICES set to the GPUs' UUIDs.
import type { PodRecord } from '../model/index.ts';
import { volumeHostPath } from '../model/index.ts';
import { GpufleetError } from '../model/index.ts';
import { CONTAINER_PATH_PATTERN, ENV_NAME_PATTERN, IMAGE_REFERENCE_PATTERN, PATTERN_MESSAGES, PORT_PATTERN } from '../model/index.ts';
import { HOST_ALIAS, tenantBridgeName, tenantNetworkName } from './tenant-network.ts';

export const LABEL_POD = 'gpufleet.pod';
export const LABEL_HOST = 'gpufleet.host';
export const LABEL_SPEC = 'gpufleet.spec';
export const LABEL_GPUS = 'gpufleet.gpus';
/** on a pod's network (tenant-network.ts): the account it belongs to */
export const LABEL_ACCOUNT = 'gpufleet.account';

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
  /**
   * Arguments after `docker`: `run`, then options, each one `--name=value` word built from our own
   * values or with the user's value inside the word, then END_OF_OPTIONS, the image and the start
   * command. No user value can be read as an option, whatever validation let through.
   */
  argv: string[];
  /** env file content, sent on stdin so values never appear in a command line */
  envFile: string;
  /**
   * `--env=K=V` option words for values an env file cannot carry exactly (a line break, a carriage
   * return, a line docker's reader would refuse as too long). They travel on stdin too and are put
   * in option position by the host's script (host-docker.ts), never in the command line we send.
   */
  envArgs: string[];
  /** host directories to create first */
  dirs: string[];
  /** the account's network on this host (tenant-network.ts), created before the container when missing, on its `gf…` bridge */
  network: { name: string; bridge: string; labels: Record<string, string> };
}

/** Ends docker's option parsing: what follows is the image, then the container's own argv. */
export const END_OF_OPTIONS = '--';

/** Longest `K=V` line sent through the env file; docker reads it with a 64 KiB line buffer. */
const ENV_FILE_LINE_MAX = 32 * 1024;

/** An env entry the env file carries byte for byte: one line, no CR (the reader drops a final one). */
export const fitsEnvFile = (line: string): boolean => !/[\r\n]/.test(line) && Buffer.byteLength(line) <= ENV_FILE_LINE_MAX;

/**
 * The stored pod must still be something docker can be given (a record written around validation,
 * by an old version or by hand): the same image grammar as the API, and no NUL anywhere. Throws
 * VALIDATION_FAILED, which the reconciler records as that pod's ERROR.
 */
function checkRunnable(pod: PodRecord): void {
  const errors: string[] = [];
  if (!IMAGE_REFERENCE.test(pod.image)) errors.push(`$.image: ${PATTERN_MESSAGES[IMAGE_REFERENCE_PATTERN]}`);
  if (pod.args.includes('\0')) errors.push('$.args: contains a NUL character');
  for (const [k, v] of Object.entries(pod.env)) {
    if (!ENV_NAME.test(k)) errors.push(`$.env: invalid name ${JSON.stringify(k)}`);
    else if (v.includes('\0')) errors.push(`$.env.${k}: contains a NUL character`);
  }
  const paths = [pod.mounts.persistent?.path, ...(pod.mounts.network ?? []).map((m) => m.path)];
  paths.forEach((path) => {
    if (path !== undefined && !CONTAINER_PATH.test(path)) errors.push(`$.mounts: path ${JSON.stringify(path)} ${PATTERN_MESSAGES[CONTAINER_PATH_PATTERN]}`);
  });
  for (const m of pod.mounts.network ?? []) if (!VOLUME_ID.test(m.volumeId)) errors.push(`$.mounts.network: invalid volume id ${JSON.stringify(m.volumeId)}`);
  for (const p of pod.ports) if (!PORT.test(p)) errors.push(`$.ports: ${JSON.stringify(p)} is not <port>/<protocol>`);
  if (errors.length) throw new GpufleetError('VALIDATION_FAILED', `The pod cannot be run: ${errors.join('; ')}`, { errors, fields: { podId: pod.id } });
}

const IMAGE_REFERENCE = new RegExp(IMAGE_REFERENCE_PATTERN, 'u');
const CONTAINER_PATH = new RegExp(CONTAINER_PATH_PATTERN, 'u');
const PORT = new RegExp(PORT_PATTERN);
const ENV_NAME = new RegExp(ENV_NAME_PATTERN);
/** volume ids are ours; one that could climb out of the volume root never reaches a host path */
const VOLUME_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/**
 * `protocolEnv`: what the control plane itself gives the container over the pod's env (a serverless
 * worker's protocol URLs and token, core/workers/worker-env.ts); it wins over a same-named variable.
 */
export function runSpec(
  pod: PodRecord,
  hostId: string,
  networkVolumePath: (volumeId: string) => string = volumeHostPath,
  protocolEnv: Readonly<Record<string, string>> = {},
): RunSpec {
  checkRunnable(pod);
  const opt = (name: string, value: string) => `--${name}=${value}`;
  const argv = ['run', '--detach', opt('pull', 'never'), opt('name', containerName(pod.id))];
  argv.push(opt('label', `${LABEL_POD}=${pod.id}`), opt('label', `${LABEL_HOST}=${hostId}`));
  argv.push(opt('label', `${LABEL_SPEC}=${specKey(pod)}`), opt('label', `${LABEL_GPUS}=${pod.gpuUuids.join(',')}`));
  argv.push(opt('env-file', '/dev/stdin'), opt('restart', 'no'));
  // the account's own network, one word; the host stays reachable by name (docs/security.md)
  const network = tenantNetworkName(hostId, pod.accountId);
  argv.push(opt('network', network), opt('add-host', `${HOST_ALIAS}:host-gateway`));
  const env: Record<string, string> = { ...pod.env, ...protocolEnv, RUNPOD_POD_ID: pod.id, GPUFLEET_POD_ID: pod.id };
  if (pod.gpu) {
    argv.push(opt('runtime', 'nvidia'));
    env.NVIDIA_VISIBLE_DEVICES = pod.gpuUuids.join(',');
    env.NVIDIA_DRIVER_CAPABILITIES ??= 'compute,utility';
    env.RUNPOD_GPU_COUNT = String(pod.gpu.count);
  } else {
    // a host whose default runtime is nvidia would otherwise give a CPU pod whatever GPUs its env names
    env.NVIDIA_VISIBLE_DEVICES = 'void';
  }
  if (pod.cpu) argv.push(opt('cpus', String(pod.cpu.vcpuCount)), opt('memory', `${pod.cpu.memory}g`));
  for (const p of pod.ports) {
    const [port, proto] = p.split('/');
    argv.push(opt('publish', `${Number.parseInt(port!, 10)}/${proto === 'udp' ? 'udp' : 'tcp'}`));
  }
  const dirs: string[] = [];
  if (pod.mounts.persistent) {
    const dir = podStorageDir(pod.id);
    dirs.push(dir);
    argv.push(opt('volume', `${dir}:${pod.mounts.persistent.path}`));
  }
  for (const m of pod.mounts.network ?? []) {
    const dir = networkVolumePath(m.volumeId);
    dirs.push(dir);
    argv.push(opt('volume', `${dir}:${m.path}`));
  }
  argv.push(END_OF_OPTIONS, pod.image, ...splitArgs(pod.args));
  const lines = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  const envFile = lines.filter(fitsEnvFile).map((l) => `${l}\n`).join('');
  const envArgs = lines.filter((l) => !fitsEnvFile(l)).map((l) => opt('env', l));
  return { argv, envFile, envArgs, dirs, network: { name: network, bridge: tenantBridgeName(hostId, pod.accountId), labels: { [LABEL_HOST]: hostId, [LABEL_ACCOUNT]: pod.accountId } } };
}
