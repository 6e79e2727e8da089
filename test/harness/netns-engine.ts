// A Docker engine of its own, as on a separate host: its own network namespace (entered with
// `nsenter --net`; `ip netns exec` fails here, "Devices cgroup isn't mounted"), data root, exec root,
// socket and default bridge. Started for the first time, like an engine on a brand-new CI machine.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runDocker } from '../../testing/index.ts';
import { waitFor } from './wait-for.ts';

const execFileP = promisify(execFile);
let counter = 0;

/**
 * Every process still in the namespace killed, as a power-off would (daemons the host's sessions
 * started there, such as the overlay's wireguard-go): a process left would keep the deleted namespace,
 * its LAN link and address alive. Only processes of this namespace, found by its inode.
 */
export async function killNamespaceProcesses(netns: string): Promise<void> {
  const ino = await stat(`/var/run/netns/${netns}`).then((s) => s.ino, () => null);
  if (ino === null) return;
  for (const pid of (await readdir('/proc')).filter((d) => /^[0-9]+$/.test(d))) {
    const ns = await readlink(`/proc/${pid}/ns/net`).catch(() => '');
    if (ns === `net:[${ino}]` && Number(pid) !== process.pid) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
  }
}

export interface NetnsEngine {
  /** the namespace's name under /var/run/netns */
  netns: string;
  /** the engine's own folder (data root, exec root, socket, config) */
  dir: string;
  /** dockerd's pid (nsenter execs it) */
  pid: number;
  /** env for the docker CLI: DOCKER_HOST at this engine's socket */
  env: NodeJS.ProcessEnv;
  /** runs a command inside the namespace (`nsenter --net=…`) and answers its stdout */
  inNetns(argv: string[]): Promise<string>;
  /** copies an image of this machine's default engine into this one (`docker save | docker load`) */
  loadImage(ref: string): Promise<void>;
  /** `docker load -i` of a tar `docker save` wrote (one save for many engines) */
  loadImageTar(tarPath: string): Promise<void>;
  /** stops dockerd (its containers with it) and deletes the namespace and the folder */
  stop(): Promise<void>;
  /** a host's shutdown: dockerd stopped (its containers with it) and the namespace deleted (its links with it); the folder kept */
  powerOff(): Promise<void>;
  /** after powerOff(), its boot: the namespace made again (beforeDockerd again) and dockerd started on the same data root */
  powerOn(): Promise<void>;
}

export interface NetnsEngineOptions {
  /** `--default-address-pool` (e.g. `base=10.213.0.0/16,size=24`): the default bridge takes its first subnet */
  addressPool?: string;
  /** `--bip`: the default bridge's address and range (e.g. `10.213.0.1/24`) */
  bip?: string;
  /** the namespace's name (default: one of this process's own, `gfeng-<pid>-<n>`) */
  netns?: string;
  /** runs after the namespace exists and before dockerd starts (links, addresses, routes) */
  beforeDockerd?: (inNetns: (argv: string[]) => Promise<string>) => Promise<void>;
  /** registers a runtime named "nvidia" that is plain runc, as the shared engine has (GPU test hosts) */
  nvidiaRuntime?: boolean;
}

export async function startNetnsEngine(opts: NetnsEngineOptions = {}): Promise<NetnsEngine> {
  const netns = opts.netns ?? `gfeng-${process.pid}-${counter++}`;
  const dir = await mkdtemp(join(tmpdir(), 'gpufleet-engine-'));
  const nsPath = `/var/run/netns/${netns}`;
  await execFileP('ip', ['netns', 'add', netns]);
  const inNetns = async (argv: string[]) => (await execFileP('nsenter', [`--net=${nsPath}`, ...argv])).stdout;
  try {
    await inNetns(['ip', 'link', 'set', 'lo', 'up']);
    await opts.beforeDockerd?.(inNetns);
  } catch (e) {
    await execFileP('ip', ['netns', 'del', netns]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  // this machine's /etc/docker/daemon.json is not this engine's
  const config = opts.nvidiaRuntime ? { runtimes: { nvidia: { path: 'runc' } } } : {};
  await writeFile(join(dir, 'daemon.json'), `${JSON.stringify(config)}\n`);
  const sock = join(dir, 'docker.sock');
  const env = { DOCKER_HOST: `unix://${sock}` };
  let child: ChildProcess;
  let exited: Promise<void>;
  /** dockerd in the namespace, answering; the same data root each time */
  const launch = async () => {
    child = spawn(
      'nsenter',
      [`--net=${nsPath}`, 'dockerd', `--config-file=${join(dir, 'daemon.json')}`, `--data-root=${join(dir, 'data')}`,
        `--exec-root=${join(dir, 'exec')}`, `--pidfile=${join(dir, 'dockerd.pid')}`, `--host=unix://${sock}`, '--storage-driver=vfs',
        ...(opts.addressPool ? [`--default-address-pool=${opts.addressPool}`] : []),
        ...(opts.bip ? [`--bip=${opts.bip}`] : [])],
      { stdio: ['ignore', 'ignore', 'pipe'], detached: false },
    );
    let log = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (log = (log + d).slice(-4000)));
    const proc = child;
    exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    await Promise.race([
      waitFor('the namespaced dockerd to answer', () => runDocker(['info', '--format', '{{.ServerVersion}}'], { env, timeoutMs: 5_000 }).then(() => true), 60_000),
      exited.then(() => Promise.reject(new Error(`dockerd exited (${proc.exitCode ?? proc.signalCode}): ${log}`))),
    ]);
    const pid = Number((await readFile(join(dir, 'dockerd.pid'), 'utf8')).trim());
    if (pid !== proc.pid) throw new Error(`dockerd's pid file says ${pid}, expected ${proc.pid}`);
  };
  /** dockerd stopped (SIGTERM: it stops its containers, as at a host's shutdown), what else ran in the namespace killed, and the namespace deleted */
  const powerOff = async () => {
    // nsenter execs dockerd, so the child's pid is dockerd's
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 30_000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    await killNamespaceProcesses(netns);
    await execFileP('ip', ['netns', 'del', netns]).catch(() => undefined);
  };
  const stop = async () => {
    await powerOff();
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  };
  try {
    await launch();
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    netns,
    dir,
    get pid() {
      return child.pid!;
    },
    env,
    inNetns,
    loadImage: (ref) => copyImage(ref, env),
    loadImageTar: async (tarPath) => {
      await runDocker(['load', '-q', '-i', tarPath], { env, timeoutMs: 120_000 });
    },
    stop,
    powerOff,
    async powerOn() {
      await execFileP('ip', ['netns', 'add', netns]);
      await inNetns(['ip', 'link', 'set', 'lo', 'up']);
      await opts.beforeDockerd?.(inNetns);
      await launch();
    },
  };
}

function copyImage(ref: string, env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const save = spawn('docker', ['save', ref], { stdio: ['ignore', 'pipe', 'pipe'] });
    const load = spawn('docker', ['load', '-q'], { stdio: ['pipe', 'ignore', 'pipe'], env: { ...process.env, ...env } });
    save.stdout.pipe(load.stdin);
    let err = '';
    save.stderr.on('data', (d: Buffer) => (err += d.toString()));
    load.stderr.on('data', (d: Buffer) => (err += d.toString()));
    save.on('error', reject);
    load.on('error', reject);
    load.on('close', (code) => (code === 0 && save.exitCode === 0 ? resolve() : reject(new Error(`docker save | docker load of ${ref} failed: ${err.trim()}`))));
  });
}
