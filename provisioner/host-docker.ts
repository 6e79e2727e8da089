// Docker on one host, over the pooled SSH connection. Each operation is one round trip: a short
// shell script whose output the control plane parses. Secrets (env, registry passwords) go on stdin.
import { shellJoin, type SshPool, type SshTarget } from '../fleet/ssh-pool.ts';
import { GpufleetError } from '../model/errors.ts';
import { containerName, LABEL_GPUS, LABEL_HOST, LABEL_POD, LABEL_SPEC, type RunSpec } from './container-spec.ts';

export interface ObservedContainer {
  id: string;
  podId: string;
  specKey: string;
  gpus: string;
  running: boolean;
  /** created | running | exited | paused | restarting | dead */
  state: string;
  exitCode: number;
  error: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** "8888/tcp" → host port */
  ports: { containerPort: number; proto: string; hostPort: number | null }[];
}

interface InspectJson {
  Id: string;
  State: { Status: string; Running: boolean; ExitCode: number; Error: string; StartedAt: string; FinishedAt: string };
  Config: { Labels: Record<string, string> | null };
  NetworkSettings: { Ports: Record<string, { HostIp: string; HostPort: string }[] | null> | null };
}

const ZERO_TIME = '0001-01-01T00:00:00Z';

export function parseInspect(json: string): ObservedContainer[] {
  const list = JSON.parse(json) as InspectJson[];
  return list
    .filter((c) => c.Config.Labels?.[LABEL_POD])
    .map((c) => {
      const labels = c.Config.Labels ?? {};
      return {
        id: c.Id,
        podId: labels[LABEL_POD]!,
        specKey: labels[LABEL_SPEC] ?? '',
        gpus: labels[LABEL_GPUS] ?? '',
        running: c.State.Running,
        state: c.State.Status,
        exitCode: c.State.ExitCode,
        error: c.State.Error,
        startedAt: c.State.StartedAt && !c.State.StartedAt.startsWith(ZERO_TIME.slice(0, 10)) ? c.State.StartedAt : null,
        finishedAt: c.State.FinishedAt && !c.State.FinishedAt.startsWith(ZERO_TIME.slice(0, 10)) ? c.State.FinishedAt : null,
        ports: Object.entries(c.NetworkSettings.Ports ?? {}).map(([k, binds]) => {
          const [port, proto] = k.split('/');
          const hostPort = binds?.find((b) => b.HostPort)?.HostPort;
          return { containerPort: Number(port), proto: proto ?? 'tcp', hostPort: hostPort ? Number(hostPort) : null };
        }),
      };
    });
}

export class HostDocker {
  constructor(
    private readonly pool: SshPool,
    private readonly target: SshTarget,
  ) {}

  private async run(script: string, stdin?: string, timeoutMs?: number) {
    return this.pool.exec(this.target, script, { allowFailure: true, ...(stdin !== undefined ? { stdin } : {}), ...(timeoutMs ? { timeoutMs } : {}) });
  }

  /** Every container this control plane labelled for this host, with its state: one round trip. */
  async observe(): Promise<ObservedContainer[]> {
    const filter = shellJoin(['--filter', `label=${LABEL_HOST}=${this.target.hostId}`]);
    const res = await this.run(`ids=$(docker ps -aq --no-trunc ${filter}) || exit 3; if [ -n "$ids" ]; then docker inspect $ids; else echo '[]'; fi`);
    if (res.code !== 0) throw new GpufleetError('SSH_COMMAND_FAILED', `docker on ${this.target.address} did not answer: ${res.stderr.trim().slice(0, 300)}`, { fields: { code: res.code } });
    return parseInspect(res.stdout);
  }

  /** Pulls, logging in first when credentials are given (password on stdin, a throwaway DOCKER_CONFIG). */
  async pull(image: string, auth?: { server: string; username: string; password: string }): Promise<{ ok: boolean; error: string }> {
    const pull = shellJoin(['docker', 'pull', '-q', image]);
    const script = auth
      ? `set -e; DOCKER_CONFIG=$(mktemp -d); export DOCKER_CONFIG; trap 'rm -rf "$DOCKER_CONFIG"' EXIT; ` +
        `${shellJoin(['docker', 'login', '--username', auth.username, '--password-stdin', auth.server])} >/dev/null; ${pull}`
      : pull;
    const res = await this.run(script, auth ? auth.password + '\n' : undefined, 30 * 60_000);
    return { ok: res.code === 0, error: (res.stderr || res.stdout).trim().slice(-500) };
  }

  /**
   * One round trip: create the storage dirs, `docker run --pull never`, inspect. `needPull` when the
   * host lacks the image (the caller pulls, with credentials, then calls again): docker never pulls
   * on its own, so a private registry's login is always ours.
   */
  async runPod(spec: RunSpec, podId: string): Promise<{ needPull: boolean; ok: boolean; error: string; container: ObservedContainer | null }> {
    const mk = spec.dirs.length ? `mkdir -p ${shellJoin(spec.dirs)} && ` : '';
    const script = `${mk}docker ${shellJoin(spec.argv)} >/dev/null && docker inspect ${shellJoin([containerName(podId)])}`;
    const res = await this.run(script, spec.envFile);
    const error = res.stderr.trim().slice(-500);
    if (res.code !== 0 && /No such image/i.test(error)) {
      await this.run(`docker rm -f ${shellJoin([containerName(podId)])} >/dev/null 2>&1; true`);
      return { needPull: true, ok: false, error, container: null };
    }
    const container = res.code === 0 ? (parseInspect(res.stdout)[0] ?? null) : null;
    return { needPull: false, ok: res.code === 0, error, container };
  }

  /** Starts the kept container and inspects it, in one round trip. */
  async start(podId: string): Promise<{ ok: boolean; error: string; container: ObservedContainer | null }> {
    const name = shellJoin([containerName(podId)]);
    const res = await this.run(`docker start ${name} >/dev/null && docker inspect ${name}`);
    const container = res.code === 0 ? (parseInspect(res.stdout)[0] ?? null) : null;
    return { ok: res.code === 0, error: res.stderr.trim().slice(-500), container };
  }

  async stop(podId: string): Promise<void> {
    await this.run(shellJoin(['docker', 'stop', '-t', '10', containerName(podId)]));
  }

  async restart(podId: string): Promise<void> {
    await this.run(shellJoin(['docker', 'restart', '-t', '10', containerName(podId)]));
  }

  /** Removes a container by id (orphans) or by pod, and optionally the pod's host storage. */
  async remove(containerIdOrName: string, storageDir?: string): Promise<void> {
    const rmDir = storageDir ? ` && rm -rf ${shellJoin([storageDir])}` : '';
    await this.run(`docker rm -f ${shellJoin([containerIdOrName])} >/dev/null 2>&1; true${rmDir}`);
  }

  async removeDir(dir: string): Promise<void> {
    await this.run(`rm -rf ${shellJoin([dir])}`);
  }

  async logsTail(podId: string, lines = 20): Promise<string> {
    const res = await this.run(`docker logs --tail ${lines} ${shellJoin([containerName(podId)])} 2>&1`);
    return res.stdout.trim().slice(-1000);
  }

  /** CPU and memory percent per container id (docker stats samples for about a second). */
  async stats(ids: string[]): Promise<Map<string, { cpu: number; mem: number }>> {
    const out = new Map<string, { cpu: number; mem: number }>();
    if (ids.length === 0) return out;
    const res = await this.run(`docker stats --no-stream --no-trunc --format '{{json .}}' ${shellJoin(ids)}`);
    for (const line of res.stdout.split('\n')) {
      if (!line.trim()) continue;
      try {
        const s = JSON.parse(line) as { ID: string; CPUPerc: string; MemPerc: string };
        out.set(s.ID, { cpu: Math.round(parseFloat(s.CPUPerc) || 0), mem: Math.round(parseFloat(s.MemPerc) || 0) });
      } catch {
        /* a line docker did not finish: skip */
      }
    }
    return out;
  }

  async run0(command: string): Promise<string> {
    return (await this.run(command)).stdout;
  }
}
