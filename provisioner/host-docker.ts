// Docker on one host, over the pooled SSH connection. Each operation is one round trip: a short
// shell script whose output the control plane parses. Secrets (env, registry passwords) go on stdin.
import { shellJoin, type SshPool, type SshTarget } from '../fleet/index.ts';
import { GpufleetError } from '../model/index.ts';
import { canonicalIpv4, isImageId } from '../model/index.ts';
import { containerName, END_OF_OPTIONS, LABEL_ACCOUNT, LABEL_GPUS, LABEL_HOST, LABEL_POD, LABEL_SPEC, type RunSpec } from './container-spec.ts';
import { FIREWALL_FAILED, forgetBridgesScript, isolationPrelude } from './tenant-firewall.ts';
import { NETWORK_SETUP_EXIT, tenantNetworkScript } from './tenant-network-setup.ts';

/** runPod's answer when the cached image is private to other accounts: the pod pulls it itself */
const REFUSED_IMAGE = 'gpufleet:image-private-to-other-accounts';
const REFUSED_EXIT = 97;

/** the steps of a pod on a host whose failure the reconciler retries with backoff (pod-retry.ts) */
export type PodStep = 'network' | 'stop' | 'restart';

/** seconds a container has between SIGTERM and SIGKILL on stop and restart (docs/pods.md#stopping) */
export const STOP_GRACE_S = 10;

export interface ObservedContainer {
  id: string;
  podId: string;
  specKey: string;
  gpus: string;
  running: boolean;
  /** the container's main process on the host (0 when not running): its network namespace is `nsenter -t <pid> -n` */
  pid: number;
  /** created | running | exited | paused | restarting | dead */
  state: string;
  exitCode: number;
  /** the kernel's OOM killer ended it */
  oomKilled: boolean;
  error: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** "8888/tcp" → host port */
  ports: { containerPort: number; proto: string; hostPort: number | null }[];
  /** the host file Docker bind-mounts as the container's /etc/resolv.conf (the overlay's DNS rewrites it) */
  resolvConf?: string;
}

interface InspectJson {
  Id: string;
  ResolvConfPath?: string;
  State: { Status: string; Running: boolean; Pid?: number; ExitCode: number; OOMKilled?: boolean; Error: string; StartedAt: string; FinishedAt: string };
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
        pid: c.State.Running && Number.isInteger(c.State.Pid) ? c.State.Pid! : 0,
        state: c.State.Status,
        exitCode: c.State.ExitCode,
        oomKilled: c.State.OOMKilled === true,
        error: c.State.Error,
        startedAt: c.State.StartedAt && !c.State.StartedAt.startsWith(ZERO_TIME.slice(0, 10)) ? c.State.StartedAt : null,
        finishedAt: c.State.FinishedAt && !c.State.FinishedAt.startsWith(ZERO_TIME.slice(0, 10)) ? c.State.FinishedAt : null,
        ports: Object.entries(c.NetworkSettings.Ports ?? {}).map(([k, binds]) => {
          const [port, proto] = k.split('/');
          const hostPort = binds?.find((b) => b.HostPort)?.HostPort;
          return { containerPort: Number(port), proto: proto ?? 'tcp', hostPort: hostPort ? Number(hostPort) : null };
        }),
        ...(c.ResolvConfPath ? { resolvConf: c.ResolvConfPath } : {}),
      };
    });
}

/**
 * Env entries an env file cannot carry (line breaks) become `--env=K=V` words without entering the
 * command line: stdin starts with one base64 line per word and a `.` line, which this prelude turns
 * into the positional parameters (`read` takes a pipe byte by byte, so docker's `--env-file
 * /dev/stdin` then reads the rest). base64 keeps every byte, trailing newlines included (the `x`).
 */
export const READ_ENV_ARGS =
  `set --; while IFS= read -r l && [ "$l" != . ]; do ` +
  `w=$(printf %s "$l" | base64 -d && echo x) || { echo 'base64 -d failed on the host' >&2; exit 3; }; set -- "$@" "\${w%x}"; done; `;

export function envArgsInput(words: readonly string[]): string {
  return words.length ? words.map((w) => `${Buffer.from(w).toString('base64')}\n`).join('') + '.\n' : '';
}

/** the kernel's id of the host's current boot: a new one after every reboot (docs/pods.md, "A host that restarted") */
export const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';
const HOST_LINE = '@@gpufleet-host';
const BOOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** what observe() asks the host of itself, on the first line of its output */
export interface HostSelf {
  /** its kernel's boot id (null: it did not say) */
  bootId: string | null;
  /** its own IPv4 address of this SSH connection (`SSH_CONNECTION`'s third word, written canonically; null: not a canonical IPv4 address or not said) */
  connectedAddress: string | null;
}

/** the line observe() prints first, and the rest of stdout */
export function splitHostLine(stdout: string): HostSelf & { rest: string } {
  if (!stdout.startsWith(`${HOST_LINE} `)) return { bootId: null, connectedAddress: null, rest: stdout };
  const nl = stdout.indexOf('\n');
  const words = (nl < 0 ? stdout : stdout.slice(0, nl)).trim().split(/\s+/);
  const boot = (words[1] ?? '').toLowerCase();
  const server = words[4] ?? '';
  return {
    bootId: BOOT_ID.test(boot) ? boot : null,
    connectedAddress: canonicalIpv4(server),
    rest: nl < 0 ? '' : stdout.slice(nl + 1),
  };
}

export class HostDocker {
  /** set by observe(): why the last assertion of the isolation rules failed, or null (tenant-firewall.ts) */
  firewallError: string | null = null;
  /** set by observe(): the host's boot id and its address of this connection, as it said them in that round trip */
  self: HostSelf = { bootId: null, connectedAddress: null };
  get bootId(): string | null {
    return this.self.bootId;
  }

  /**
   * `spareNetworks`: the host's networks kept for accounts with no pod there now (tenant-network-gc.ts),
   * which a network create may remove to make room
   */
  constructor(
    private readonly pool: SshPool,
    private readonly target: SshTarget,
    private readonly spareNetworks: readonly string[] = [],
  ) {}

  private async run(script: string, stdin?: string, timeoutMs?: number) {
    return this.pool.exec(this.target, script, { allowFailure: true, ...(stdin !== undefined ? { stdin } : {}), ...(timeoutMs ? { timeoutMs } : {}) });
  }

  /**
   * Every container this control plane labelled for this host, with its state: one round trip. With
   * `isolate`, the same round trip first re-asserts the isolation rules for those tenant bridges
   * (tenant-firewall.ts); a failure there is `firewallError`, not a failed observation. The same
   * round trip reads the host's boot id (by which a pass knows the host restarted) and its own address
   * of the connection (a host enrolled by name: its overlay address), in `self`.
   */
  async observe(opts: { isolate?: readonly string[] } = {}): Promise<ObservedContainer[]> {
    const filter = shellJoin(['--filter', `label=${LABEL_HOST}=${this.target.hostId}`]);
    const prelude = opts.isolate ? isolationPrelude(opts.isolate) : '';
    const boot = `b=$(cat ${BOOT_ID_FILE} 2>/dev/null); echo "${HOST_LINE} \${b:--} \${SSH_CONNECTION:--}"; `;
    const res = await this.run(`${boot}${prelude}ids=$(docker ps -aq --no-trunc ${filter}) || exit 3; if [ -n "$ids" ]; then docker inspect $ids; else echo '[]'; fi`);
    if (res.code !== 0) throw new GpufleetError('SSH_COMMAND_FAILED', `docker on ${this.target.address} did not answer: ${res.stderr.trim().slice(0, 300)}`, { fields: { code: res.code } });
    if (opts.isolate) this.firewallError = res.stderr.includes(FIREWALL_FAILED) ? 'iptables failed while asserting the tenant isolation rules' : null;
    const { rest, ...self } = splitHostLine(res.stdout);
    this.self = self;
    return parseInspect(rest);
  }

  /**
   * One round trip: the account's network when missing and its isolation rules (tenant-network-setup.ts),
   * the storage dirs, `docker run --pull never`, inspect. `needPull` when the host lacks the image, or
   * when its cached copy is one of `refusedImageIds` (pulled with another account's credentials,
   * model/records/private-images.ts): the caller pulls (image-pull.ts, beside the pass), with this pod's credentials, then calls again. Docker
   * never pulls on its own, so a private registry's login is always ours. `verifyNetwork`: ask docker
   * about the network even when its bridge is there (the retry when docker says it has no such network).
   */
  async runPod(
    spec: RunSpec,
    podId: string,
    image: { ref: string; refusedImageIds: readonly string[] },
    opts: { verifyNetwork?: boolean } = {},
  ): Promise<{ needPull: boolean; refused: boolean; ok: boolean; error: string; container: ObservedContainer | null }> {
    const refused = image.refusedImageIds.filter(isImageId);
    const check = refused.length
      ? `img=$(${shellJoin(['docker', 'image', 'inspect', '--format', '{{.Id}}', END_OF_OPTIONS, image.ref])} 2>/dev/null </dev/null) || img=; ` +
        `case "$img" in ${refused.join('|')}) echo ${REFUSED_IMAGE} >&2; exit ${REFUSED_EXIT};; esac; `
      : '';
    const network = tenantNetworkScript(spec.network, { askDocker: opts.verifyNetwork === true, spare: this.spareNetworks });
    const mk = spec.dirs.length ? `mkdir -p ${shellJoin(spec.dirs)} && ` : '';
    const end = spec.argv.indexOf(END_OF_OPTIONS);
    if (end < 0) throw new GpufleetError('INTERNAL', 'docker run arguments without an end of options');
    // first in the script, so nothing before it can read stdin
    const [prelude, args] = spec.envArgs.length
      ? [READ_ENV_ARGS, `${shellJoin(spec.argv.slice(0, end))} "$@" ${shellJoin(spec.argv.slice(end))}`]
      : ['', shellJoin(spec.argv)];
    const script = `${prelude}${check}${network}${mk}docker ${args} >/dev/null && docker inspect ${shellJoin([containerName(podId)])}`;
    const res = await this.run(script, envArgsInput(spec.envArgs) + spec.envFile);
    const error = res.stderr.trim().slice(-500);
    // its bridge is there but docker has no such network (a host changed behind our back): once more, asking docker
    if (res.code !== 0 && !opts.verifyNetwork && error.includes(`network ${spec.network.name} not found`)) return this.runPod(spec, podId, image, { verifyNetwork: true });
    // the host's fault, not the pod's: the reconciler tries again with backoff
    if (res.code === NETWORK_SETUP_EXIT) throw this.stepFailed('network', `the network ${spec.network.name} could not be readied on ${this.target.address}: ${error}`, res.code);
    if (res.code === REFUSED_EXIT && error.includes(REFUSED_IMAGE)) return { needPull: true, refused: true, ok: false, error, container: null };
    if (res.code !== 0 && /No such image/i.test(error)) {
      await this.run(`docker rm -f ${shellJoin([containerName(podId)])} >/dev/null 2>&1; true`);
      return { needPull: true, refused: false, ok: false, error, container: null };
    }
    const container = res.code === 0 ? (parseInspect(res.stdout)[0] ?? null) : null;
    return { needPull: false, refused: false, ok: res.code === 0, error, container };
  }

  /** Accounts that have a network on this host (tenant-network.ts), from the networks' labels. */
  async tenantNetworkAccounts(hostId: string): Promise<string[]> {
    const res = await this.run(
      shellJoin(['docker', 'network', 'ls', '--filter', `label=${LABEL_HOST}=${hostId}`, '--format', `{{.Label "${LABEL_ACCOUNT}"}}`]),
    );
    if (res.code !== 0) throw new GpufleetError('SSH_COMMAND_FAILED', `docker network ls on ${this.target.address} failed: ${res.stderr.trim().slice(0, 300)}`);
    return res.stdout.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
  }

  /**
   * Removes networks; answers those still there (a container still holds them). `bridges`: the
   * tenant bridges of those networks, whose isolation rules go once no network of that name is left.
   */
  async removeNetworks(names: readonly string[], bridges: readonly string[] = []): Promise<string[]> {
    let script = `for n in ${shellJoin([...names])}; do docker network rm "$n" >/dev/null 2>&1 || ! docker network inspect "$n" >/dev/null 2>&1 || echo "$n"; done`;
    if (bridges.length) script = `${script}; for b in ${bridges.map((b) => shellJoin([b])).join(' ')}; do ip link show "$b" >/dev/null 2>&1 || echo "gone $b"; done`;
    const res = await this.run(script);
    const gone = res.stdout.split('\n').flatMap((l) => (l.startsWith('gone ') ? [l.slice(5).trim()] : []));
    const forget = bridges.filter((b) => gone.includes(b));
    if (forget.length) await this.run(forgetBridgesScript(forget));
    const left = new Set(res.stdout.split('\n').map((l) => l.trim()));
    return res.code === 0 ? names.filter((n) => left.has(n)) : [...names];
  }

  /** Starts the kept container and inspects it, in one round trip. */
  async start(podId: string): Promise<{ ok: boolean; error: string; container: ObservedContainer | null }> {
    const name = shellJoin([containerName(podId)]);
    const res = await this.run(`docker start ${name} >/dev/null && docker inspect ${name}`);
    const container = res.code === 0 ? (parseInspect(res.stdout)[0] ?? null) : null;
    return { ok: res.code === 0, error: res.stderr.trim().slice(-500), container };
  }

  /**
   * Stops the pod's container: SIGTERM (or the image's stop signal), SIGKILL after `graceSeconds`
   * (STOP_GRACE_S unless given: a preemption's grace, docs/teams.md); a failure (docker did not answer
   * 0) is SSH_COMMAND_FAILED, step `stop`.
   */
  async stop(podId: string, graceSeconds = STOP_GRACE_S): Promise<void> {
    const res = await this.run(shellJoin(['docker', 'stop', '-t', String(graceSeconds), containerName(podId)]), undefined, graceSeconds > 60 ? (graceSeconds + 60) * 1000 : undefined);
    if (res.code !== 0) throw this.stepFailed('stop', `docker stop on ${this.target.address} failed: ${res.stderr.trim().slice(-300)}`, res.code);
  }

  /**
   * Stops the pod's container before its pod moves: SIGTERM, SIGKILL after `graceS`, and at most
   * `killWaitS` more for it to exit (a process stuck in the driver may never). Answers 'stuck' when it
   * did not exit in time, 'stopped' otherwise (also when there was no such container). The wait is
   * bounded on the host (`timeout`), so the SSH channel is not left hanging.
   */
  async stopForMove(podId: string, graceS: number, killWaitS: number): Promise<'stopped' | 'stuck'> {
    const limit = graceS + killWaitS;
    const script = `timeout -s KILL ${limit} ${shellJoin(['docker', 'stop', '-t', String(graceS), containerName(podId)])} >/dev/null 2>&1; rc=$?; ` +
      `if [ "$rc" = 137 ] || [ "$rc" = 124 ]; then echo stuck; fi`;
    const res = await this.run(script, undefined, (limit + 15) * 1000);
    return res.stdout.includes('stuck') ? 'stuck' : 'stopped';
  }

  /** Restarts the pod's container; a failure is SSH_COMMAND_FAILED, step `restart`. */
  async restart(podId: string): Promise<void> {
    const res = await this.run(shellJoin(['docker', 'restart', '-t', String(STOP_GRACE_S), containerName(podId)]));
    if (res.code !== 0) throw this.stepFailed('restart', `docker restart on ${this.target.address} failed: ${res.stderr.trim().slice(-300)}`, res.code);
  }

  /** A step that failed on a live host (pod-retry.ts words it for the pod's reason; the message is the operator's). */
  private stepFailed(step: PodStep, message: string, code: number): GpufleetError {
    return new GpufleetError('SSH_COMMAND_FAILED', message, { fields: { hostId: this.target.hostId, step, code } });
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
