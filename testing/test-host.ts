// A real sshd per test host, owned by the test: its own host key, an authorized ed25519 client
// key for root, a loopback address of its own (127.0.0.x) and, on GPU hosts, a fixture nvidia-smi.
// All test hosts drive this machine's one Docker engine.
//
// PATH: sshd's `SetEnv` overrides the session environment (incl. PATH) for exec channels, so the
// per-host bin dir is visible to commands run over SSH on that host only. We also set SHLVL=1:
// Debian's bash sources ~/.bashrc for non-interactive shells started by sshd unless SHLVL >= 1
// (SSH_SOURCE_BASHRC), and this machine's root .bashrc rewrites PATH and is slow. Pass
// `sourceShellStartupFiles: true` to get stock behaviour.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile, chmod } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { nvidiaSmiScript, type FixtureGpu } from './nvidia-smi-fixture.ts';
import { installDockerRunGate, type DockerRunGate } from './docker-run-gate.ts';
import { installDockerFaults, type DockerFaults } from './docker-faults.ts';
import { installGpuFixtures, type GpuFixtures, type KernelLogSource } from './gpu-fixtures.ts';
import { installDockerOwnNames } from './docker-own-names.ts';

export type { FixtureGpu } from './nvidia-smi-fixture.ts';
export type { DockerRunGate } from './docker-run-gate.ts';
export type { DockerFaults, DockerFaultOp } from './docker-faults.ts';
export type { GpuFixtures, KernelLogSource } from './gpu-fixtures.ts';
export { FIXTURE_GPUS, fixtureGpuUuid } from './nvidia-smi-fixture.ts';

const run = promisify(execFile);
const STD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface StartTestHostOptions {
  name: string;
  /** GPUs the fixture nvidia-smi reports; none (default) = CPU host without nvidia-smi */
  gpus?: FixtureGpu[];
  cudaVersion?: string;
  driverVersion?: string;
  /** loopback address to listen on; default: the next free 127.0.0.x of this process */
  address?: string;
  sourceShellStartupFiles?: boolean;
  /** put a `docker` wrapper first on PATH whose run/create the test can hold (docker-run-gate.ts) */
  dockerRunGate?: boolean;
  /** put a `docker` wrapper first on PATH that counts and fails docker operations on demand (docker-faults.ts) */
  dockerFaults?: boolean;
  /** run sshd inside this network namespace (/var/run/netns/<name>), on `address`:`port` there (netns-fleet.ts) */
  netns?: string;
  /** with `netns`: the port (default 22) */
  port?: number;
  /** more variables for every session (sshd's SetEnv), e.g. DOCKER_HOST at the host's own engine */
  sessionEnv?: Record<string, string>;
  /** GPU hosts: how the host offers its kernel log, `dmesg` (default: no journald) or `journal` (gpu-fixtures.ts) */
  kernelLog?: KernelLogSource;
  /** GPU hosts: `nvidia-smi --help-query-gpu` without the remapped_rows fields (read through --query-remapped-rows) */
  remappedInQueryGpu?: boolean;
  /** put a `docker` wrapper first on PATH that gives this host's pod containers names of its own (docker-own-names.ts) */
  ownContainerNames?: boolean;
  /**
   * the host has a kernel boot id of its own: its sessions read /proc/sys/kernel/random/boot_id from a
   * file of the host's (sshd in a mount namespace of its own with that file bound over it; every other
   * mount, /run/netns included, is shared as before), which newBoot() renews, as a reboot does
   */
  bootId?: boolean;
}

export interface TestHost {
  readonly name: string;
  readonly address: string;
  readonly port: number;
  readonly user: 'root';
  readonly privateKeyPath: string;
  /** OpenSSH-format ed25519 private key authorized for root */
  readonly privateKey: string;
  /** SHA256:<base64>, as `ssh-keygen -lf` prints it; changes on rotateHostKey() */
  readonly hostKeyFingerprint: string;
  /** temp dir holding keys, sshd_config and bin/ */
  readonly dir: string;
  readonly running: boolean;
  /** holds `docker run`/`create` on this host on demand; null unless started with `dockerRunGate: true` */
  readonly dockerRunGate: DockerRunGate | null;
  /** counts and fails docker operations on this host; null unless started with `dockerFaults: true` */
  readonly dockerFaults: DockerFaults | null;
  /** GPU hosts: their kernel log, nvidia-smi's answers and dcgmi, as a test sets them (gpu-fixtures.ts); null on CPU hosts */
  readonly gpu: GpuFixtures | null;
  /** kills sshd and every session it spawned: the host becomes unreachable */
  stop(): Promise<void>;
  /** SIGSTOPs sshd and its sessions: TCP still connects, SSH never answers (a hung host) */
  pause(): Promise<void>;
  /** SIGCONTs what pause() stopped */
  resume(): Promise<void>;
  /** restarts on the same address/port with the same host key */
  start(): Promise<void>;
  /** new host key, then restart */
  rotateHostKey(): Promise<void>;
  /** rewrites the fixture nvidia-smi (e.g. new utilization); [] removes it */
  setGpus(gpus: FixtureGpu[]): Promise<void>;
  /** with `bootId`: a new boot id from now on (a reboot); answers it */
  newBoot(): Promise<string>;
  /** with `bootId`: the boot id its sessions read now; null without */
  readonly bootId: string | null;
  /** sshd's own log (stderr), for debugging failed tests */
  logs(): string;
  /** stop and remove the temp dir */
  dispose(): Promise<void>;
}

let nextOctet = 2;
const live = new Set<ChildProcess>();
// a crashed test must not leave sshd listeners behind
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

export async function startTestHost(opts: StartTestHostOptions): Promise<TestHost> {
  const address = opts.address ?? `127.0.0.${nextOctet}`;
  if (!opts.address) nextOctet = nextOctet >= 254 ? 2 : nextOctet + 1;
  const dir = await mkdtemp(join(tmpdir(), `gpufleet-host-${opts.name.replace(/[^\w.-]/g, '_')}-`));
  await mkdir(join(dir, 'bin'));
  await mkdir('/run/sshd', { recursive: true, mode: 0o755 }); // sshd's privsep dir
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `root@${opts.name}`, '-f', join(dir, 'client_key')]);
  await writeFile(join(dir, 'authorized_keys'), await readFile(join(dir, 'client_key.pub')));
  const host = new SshdTestHost(opts, address, dir, await readFile(join(dir, 'client_key'), 'utf8'));
  // GPU hosts read a kernel log of their own, never this machine's
  if ((opts.gpus ?? []).length > 0) host.gpu = await installGpuFixtures(dir, join(dir, 'bin'), opts.kernelLog ?? 'dmesg');
  await host.setGpus(opts.gpus ?? []);
  if (opts.dockerRunGate && opts.dockerFaults) throw new Error('startTestHost: dockerRunGate and dockerFaults both replace docker on the PATH; pick one');
  if (opts.dockerRunGate) host.dockerRunGate = await installDockerRunGate(dir, join(dir, 'bin'));
  if (opts.dockerFaults) host.dockerFaults = await installDockerFaults(dir, join(dir, 'bin'));
  if (opts.ownContainerNames && (opts.dockerRunGate || opts.dockerFaults)) throw new Error('startTestHost: ownContainerNames replaces docker on the PATH too; pick one wrapper');
  if (opts.ownContainerNames) await installDockerOwnNames(join(dir, 'bin'), opts.name);
  await host.newHostKey();
  if (opts.bootId) await host.newBoot();
  if (opts.netns) {
    // a namespace of the test's own: the address is the host's alone, nothing else binds there
    host.port = opts.port ?? 22;
    await host.writeConfig();
    try {
      await host.start();
      return host;
    } catch (e) {
      await host.dispose();
      throw e;
    }
  }
  for (let attempt = 0; ; attempt++) {
    host.port = await freePort(address);
    await host.writeConfig();
    try {
      await host.start();
      return host;
    } catch (e) {
      // another process may have taken the port between our probe and sshd's bind
      if (attempt >= 4 || !/Address already in use/.test(host.logs())) {
        await host.dispose();
        throw e;
      }
    }
  }
}

class SshdTestHost implements TestHost {
  readonly user = 'root' as const;
  readonly name: string;
  readonly privateKeyPath: string;
  port = 0;
  hostKeyFingerprint = '';
  dockerRunGate: DockerRunGate | null = null;
  dockerFaults: DockerFaults | null = null;
  gpu: GpuFixtures | null = null;
  private proc: ChildProcess | null = null;
  private log = '';

  constructor(
    private readonly opts: StartTestHostOptions,
    readonly address: string,
    readonly dir: string,
    readonly privateKey: string,
  ) {
    this.name = opts.name;
    this.privateKeyPath = join(dir, 'client_key');
  }

  get running(): boolean {
    return this.proc !== null;
  }

  bootId: string | null = null;

  async newBoot(): Promise<string> {
    if (!this.opts.bootId) throw new Error(`test host ${this.name}: started without bootId`);
    this.bootId = randomUUID();
    // written in place: the file bound over boot_id is this very inode
    await writeFile(join(this.dir, 'boot_id'), `${this.bootId}\n`);
    return this.bootId;
  }

  logs(): string {
    return this.log;
  }

  async newHostKey(): Promise<void> {
    const key = join(this.dir, 'host_ed25519_key');
    await rm(key, { force: true });
    await rm(`${key}.pub`, { force: true });
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', this.name, '-f', key]);
    const { stdout } = await run('ssh-keygen', ['-l', '-f', `${key}.pub`]);
    const fp = stdout.split(' ')[1];
    if (!fp?.startsWith('SHA256:')) throw new Error(`unexpected ssh-keygen -l output: ${stdout}`);
    this.hostKeyFingerprint = fp;
  }

  async writeConfig(): Promise<void> {
    const env = [`PATH=${join(this.dir, 'bin')}:${STD_PATH}`];
    if (!this.opts.sourceShellStartupFiles) env.push('SHLVL=1');
    for (const [k, v] of Object.entries(this.opts.sessionEnv ?? {})) {
      if (!/^[A-Z_][A-Z0-9_]*$/.test(k) || /[\s"]/.test(v)) throw new Error(`sessionEnv ${k}: not a plain name and value`);
      env.push(`${k}=${v}`);
    }
    const lines = [
      `ListenAddress ${this.address}:${this.port}`,
      `HostKey ${join(this.dir, 'host_ed25519_key')}`,
      `PidFile ${join(this.dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${join(this.dir, 'authorized_keys')}`,
      'StrictModes no',
      'PermitRootLogin prohibit-password',
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'PrintMotd no',
      'UseDNS no',
      `SetEnv ${env.join(' ')}`,
    ];
    await writeFile(join(this.dir, 'sshd_config'), `${lines.join('\n')}\n`);
  }

  async setGpus(gpus: FixtureGpu[]): Promise<void> {
    const target = join(this.dir, 'bin', 'nvidia-smi');
    if (gpus.length === 0) {
      await rm(target, { force: true });
      return;
    }
    const script = nvidiaSmiScript({
      hostName: this.name,
      gpus,
      driverVersion: this.opts.driverVersion ?? '550.54.15',
      cudaVersion: this.opts.cudaVersion ?? '12.4',
      ...(this.gpu ? { stateDir: this.gpu.stateDir } : {}),
      ...(this.opts.remappedInQueryGpu === false ? { remappedInQueryGpu: false } : {}),
    });
    // write + rename: a concurrent ssh command never sees a half-written script
    const tmp = `${target}.${process.pid}.tmp`;
    await writeFile(tmp, script);
    await chmod(tmp, 0o755);
    await rename(tmp, target);
  }

  start(): Promise<void> {
    if (this.proc) return Promise.resolve();
    this.log = '';
    const sshd = ['/usr/sbin/sshd', '-D', '-e', '-f', join(this.dir, 'sshd_config')];
    // nsenter execs sshd: the child's pid is sshd's, as without a namespace
    // a boot id of its own: bound over the kernel's in a mount namespace of sshd's (private /proc, so the
    // bind stays there; everything else keeps its propagation, so `ip netns add` in a session is seen by all)
    const booted = this.opts.bootId
      ? ['unshare', '--mount', '--propagation', 'unchanged', 'sh', '-c',
        'mount --make-private /proc && mount --bind "$0" /proc/sys/kernel/random/boot_id && exec "$@"', join(this.dir, 'boot_id'), ...sshd]
      : sshd;
    const argv = this.opts.netns ? ['nsenter', `--net=/var/run/netns/${this.opts.netns}`, ...booted] : booted;
    const proc = spawn(argv[0]!, argv.slice(1), {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.proc = proc;
    live.add(proc);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => fail(new Error('sshd did not start listening within 10s')), 10_000);
      const fail = (e: Error): void => {
        clearTimeout(timer);
        proc.kill('SIGKILL');
        reject(new Error(`test host ${this.name}: ${e.message}\n${this.log}`));
      };
      proc.stderr?.setEncoding('utf8').on('data', (d: string) => {
        this.log = (this.log + d).slice(-64 * 1024);
        if (this.log.includes('Server listening on')) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.on('error', fail);
      proc.on('exit', (code, signal) => {
        live.delete(proc);
        if (this.proc === proc) this.proc = null;
        fail(new Error(`sshd exited (${code ?? signal})`)); // no-op once resolved
      });
    });
  }

  async stop(): Promise<void> {
    const proc = this.proc;
    if (!proc?.pid) return;
    // sshd leaves established sessions running when the listener dies; a stopped host must
    // drop them too, so kill the listener's whole process tree (children call setsid()).
    // SIGSTOP first so the listener cannot fork a new session while we collect the tree.
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    proc.kill('SIGSTOP');
    const tree = descendants(proc.pid);
    proc.kill('SIGKILL');
    signalAll(tree, 'SIGKILL');
    await exited;
  }

  async pause(): Promise<void> {
    const pid = this.proc?.pid;
    if (!pid) return;
    process.kill(pid, 'SIGSTOP');
    signalAll(descendants(pid), 'SIGSTOP');
  }

  async resume(): Promise<void> {
    const pid = this.proc?.pid;
    if (!pid) return;
    signalAll(descendants(pid), 'SIGCONT');
    process.kill(pid, 'SIGCONT');
  }

  async rotateHostKey(): Promise<void> {
    const wasRunning = this.running;
    await this.stop();
    await this.newHostKey();
    if (wasRunning) await this.start();
  }

  async dispose(): Promise<void> {
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }
}

function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

/** pids of all descendants of `root`, from /proc (ppid links) */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // the comm field may contain spaces/parens: ppid is the 2nd field after the last ')'
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    for (const c of children.get(pid) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

function freePort(address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, address, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}
