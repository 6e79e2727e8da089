// Direct access to this machine's Docker engine for tests: they check what the control plane did
// by asking the engine itself, never by trusting the code under test. Uses the docker CLI.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

export interface DockerResult {
  stdout: string;
  stderr: string;
}

/** Runs `docker <args>`; rejects with an Error that carries stderr on non-zero exit. */
export function runDocker(args: string[], opts: { stdin?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<DockerResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'docker',
      args,
      { maxBuffer: 64 * 1024 * 1024, timeout: opts.timeoutMs ?? 120_000, env: opts.env ? { ...process.env, ...opts.env } : process.env },
      (err, stdout, stderr) => {
        if (err) {
          reject(new Error(`docker ${args.join(' ')} failed: ${stderr.trim() || err.message}`, { cause: err }));
          return;
        }
        resolve({ stdout, stderr });
      },
    );
    if (opts.stdin !== undefined) child.stdin?.end(opts.stdin);
    else child.stdin?.end();
  });
}

/** The parts of `docker inspect` (container) that tests look at; the rest is kept untyped. */
export interface ContainerInspect {
  Id: string;
  /** leading slash included, as the engine reports it */
  Name: string;
  Created: string;
  State: {
    Status: string;
    Running: boolean;
    Paused: boolean;
    Restarting: boolean;
    OOMKilled: boolean;
    ExitCode: number;
    StartedAt: string;
    FinishedAt: string;
  };
  Config: {
    Image: string;
    Env: string[] | null;
    Cmd: string[] | null;
    Entrypoint: string[] | null;
    Labels: Record<string, string> | null;
    ExposedPorts?: Record<string, object> | null;
  };
  HostConfig: {
    Runtime: string;
    Binds: string[] | null;
    Memory: number;
    NanoCpus: number;
    ShmSize: number;
    RestartPolicy: { Name: string; MaximumRetryCount: number };
    PortBindings: Record<string, Array<{ HostIp: string; HostPort: string }> | null> | null;
    DeviceRequests: Array<{ Driver: string; Count: number; DeviceIDs: string[] | null; Capabilities: string[][] | null }> | null;
    [key: string]: unknown;
  };
  Mounts: Array<{ Type: string; Name?: string; Source: string; Destination: string; RW: boolean }>;
  NetworkSettings: {
    Ports: Record<string, Array<{ HostIp: string; HostPort: string }> | null> | null;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** `docker inspect` of one container, or null when the engine has no such container. */
export async function dockerInspect(nameOrId: string): Promise<ContainerInspect | null> {
  try {
    const { stdout } = await runDocker(['container', 'inspect', nameOrId]);
    const parsed = JSON.parse(stdout) as ContainerInspect[];
    return parsed[0] ?? null;
  } catch (e) {
    if (e instanceof Error && /no such (container|object)/i.test(e.message)) return null;
    throw e;
  }
}

/**
 * All containers (running or not) matching a label filter, inspected.
 * `labelFilter` is what `docker ps --filter label=` takes: `key` or `key=value`.
 */
export async function listContainers(labelFilter: string): Promise<ContainerInspect[]> {
  const ids = await containerIds(labelFilter);
  if (ids.length === 0) return [];
  const { stdout } = await runDocker(['container', 'inspect', ...ids]);
  return JSON.parse(stdout) as ContainerInspect[];
}

/** Force-removes (with anonymous volumes) every container matching the label filter; returns how many. */
export async function removeContainersByLabel(labelFilter: string): Promise<number> {
  const ids = await containerIds(labelFilter);
  if (ids.length === 0) return 0;
  await runDocker(['rm', '-f', '-v', ...ids]);
  return ids.length;
}

/**
 * Removes every network matching the label filter (e.g. the per-account networks of a test host);
 * returns how many. The isolation rules of their gpufleet bridges go too (provisioner/tenant-firewall.ts),
 * so test runs do not pile RETURN rules up in the machine's GPUFLEET-ISOLATION chain.
 */
export async function removeNetworksByLabel(labelFilter: string): Promise<number> {
  const { stdout } = await runDocker(['network', 'ls', '-q', '--filter', `label=${labelFilter}`]);
  const ids = stdout.split('\n').map((s) => s.trim()).filter((s) => s.length > 0);
  if (ids.length === 0) return 0;
  const bridges = (await runDocker(['network', 'inspect', '--format', '{{index .Options "com.docker.network.bridge.name"}}', ...ids]).catch(() => ({ stdout: '' }))).stdout
    .split('\n')
    .map((s) => s.trim())
    .filter((b) => /^gf[0-9a-f]{13}$/.test(b));
  await runDocker(['network', 'rm', ...ids]);
  for (const b of bridges) {
    for (;;) {
      const ok = await execFileP('iptables', ['-w', '5', '-D', 'GPUFLEET-ISOLATION', '-i', b, '-o', b, '-j', 'RETURN']).then(() => true, () => false);
      if (!ok) break;
    }
  }
  return ids.length;
}

/** True when the docker CLI can reach a running engine. */
export async function dockerAvailable(): Promise<boolean> {
  try {
    await runDocker(['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 15_000 });
    return true;
  } catch {
    return false;
  }
}

async function containerIds(labelFilter: string): Promise<string[]> {
  const { stdout } = await runDocker(['ps', '-a', '-q', '--no-trunc', '--filter', `label=${labelFilter}`]);
  return stdout.split('\n').map((s) => s.trim()).filter((s) => s.length > 0);
}

/** `tar -c <root> | docker import -c <change>... - <ref>` (owners numeric, all root). */
export function importRootfs(root: string, ref: string, changes: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const tar = spawn('tar', ['-C', root, '--numeric-owner', '--owner=0', '--group=0', '-cf', '-', '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const args = ['import', ...changes.flatMap((c) => ['-c', c]), '-', ref];
    const imp = spawn('docker', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    tar.stdout.pipe(imp.stdin);
    let errText = '';
    tar.stderr.on('data', (d: Buffer) => (errText += d.toString()));
    imp.stderr.on('data', (d: Buffer) => (errText += d.toString()));
    tar.on('error', reject);
    imp.on('error', reject);
    let tarCode: number | null = null;
    tar.on('close', (code) => (tarCode = code));
    imp.on('close', (code) => {
      if (code === 0 && tarCode === 0) resolve();
      else reject(new Error(`importing ${ref} failed (tar ${tarCode}, docker import ${code}): ${errText.trim()}`));
    });
  });
}
