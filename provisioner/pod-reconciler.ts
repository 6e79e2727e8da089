// One pod on one host: from the pod's desired status and the container the host shows, decide the
// command (pull, create, start, stop, restart, remove) and record the status the host then shows.
import type { Logger } from 'pino';
import type { HostRecord } from '../model/index.ts';
import type { PodObserved, PodRecord, RuntimePort } from '../model/index.ts';
import { SshProbes } from './ssh-probe.ts';
import { pullRefusal, type ProvisionerObserver, type Services } from '../core/index.ts';
import { GpufleetError, isGpufleetError, preemptionReason, podConditions as cond, type ConditionUpdate, type PodConditionType } from '../model/index.ts';
import { GPU_METRICS_COMMAND, parseGpuMetrics } from '../fleet/index.ts';
import { podStorageDir, runSpec, specKey } from './container-spec.ts';
import { STOP_GRACE_S } from './host-docker.ts';
import type { HostDocker, ObservedContainer } from './host-docker.ts';
import { intentOf, writeObserved, type Intent, type ObservedChange } from './pod-status.ts';
import { refusedImages } from './image-access.ts';
import { runFailureReason } from './pull-errors.ts';
import type { PodPulls } from './pod-pulls.ts';

/** A container that dies this soon after starting with a non-zero code crashed on start: ERROR. */
const CRASH_ON_START_MS = 10_000;

export interface PodMetrics {
  cpu: number;
  mem: number;
  gpus: { util: number; memoryUtil: number }[];
}

/** Registry host of an image reference (docker.io when the first part is not a host). */
export function registryServer(image: string): string {
  const first = image.split('/')[0] ?? '';
  return image.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost') ? first : 'https://index.docker.io/v1/';
}

/** A registry on the host's loopback, which docker itself reaches over plain HTTP. */
export function loopbackRegistry(image: string): boolean {
  const server = registryServer(image);
  return /^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?$/.test(server);
}

export function runtimePorts(pod: PodRecord, c: ObservedContainer, hostAddress: string): RuntimePort[] {
  return pod.ports.map((p) => {
    const [port, type] = p.split('/');
    const proto = type === 'udp' ? 'udp' : 'tcp';
    const bound = c.ports.find((x) => x.containerPort === Number(port) && x.proto === proto);
    return { private: Number(port), public: bound?.hostPort ?? null, type: type ?? 'tcp', ip: bound?.hostPort ? hostAddress : null };
  });
}

/**
 * A pod gets its account's SSH public keys as PUBLIC_KEY (docs/connect.md, "SSH"), as on the public
 * cloud, when it sets no PUBLIC_KEY of its own; what the image does with it is the image's (an image
 * that runs sshd puts it in authorized_keys). Nothing else changes: not the entrypoint, not the command.
 */
async function withAccountKeys(s: Services, pod: PodRecord): Promise<PodRecord> {
  if (pod.endpointId !== undefined || Object.hasOwn(pod.env, 'PUBLIC_KEY')) return pod;
  const keys = (await s.store.get('accounts', pod.accountId))?.pubKey?.trim();
  return keys ? { ...pod, env: { PUBLIC_KEY: keys, ...pod.env } } : pod;
}

/**
 * The reason of a pod whose container ended with its host: the host's boot id (read by this pass) is not
 * the one under which its container was last seen running; null otherwise (or when either is unknown).
 */
export function hostRestarted(host: Pick<HostRecord, 'id'>, pod: Pick<PodRecord, 'observed'>, bootId: string | null): string | null {
  const before = pod.observed?.hostBootId;
  if (!before || !bootId || before === bootId) return null;
  return `host ${host.id} restarted (its boot id changed since the pod's container was last seen running, at ${pod.observed!.observedAt}): the container ended with the host, not on its own; starting it again`;
}

/** Why a container ended by a signal gpufleet did not send, in words; null when it was not killed. */
export function killedReason(c: Pick<ObservedContainer, 'exitCode' | 'oomKilled'>): string | null {
  if (c.oomKilled) return `container was killed by the kernel: out of memory (exit code ${c.exitCode})`;
  if (c.exitCode === 137) return 'container was killed with SIGKILL (exit code 137) outside gpufleet: docker kill or docker rm on the host, or the kernel';
  if (c.exitCode === 143) return 'container was stopped with SIGTERM (exit code 143) outside gpufleet: docker stop or kill on the host';
  return null;
}

export class PodReconciler {
  private readonly lastSample = new Map<string, number>();
  private readonly samples = new Map<string, Map<string, PodMetrics>>();

  constructor(
    private readonly s: Services,
    private readonly metricsIntervalMs: number,
    private readonly observer?: ProvisionerObserver,
    private readonly log?: Pick<Logger, 'warn'>,
    /**
     * Right before a command that creates a container (docker run, docker start): throws when this
     * replica no longer holds the host's reconcile lease (HostLeaseKeeper.confirm), ending the pass.
     */
    private readonly beforeCreate: (hostId: string) => Promise<void> = async () => undefined,
    /** image pulls, run beside the pass (pod-pulls.ts); set by the Reconciler */
    private readonly pulls: PodPulls | null = null,
  ) {
    this.sshProbes = new SshProbes(s);
  }

  /** does a published 22/tcp answer as an SSH server (the pod view's ssh.direct) */
  private readonly sshProbes: SshProbes;

  async reconcile(host: HostRecord, docker: HostDocker, pod: PodRecord, container: ObservedContainer | null, metrics: Map<string, PodMetrics> | null): Promise<void> {
    const intent = intentOf(pod);
    if (pod.desiredStatus === 'TERMINATED') {
      if (container) await docker.remove(container.id);
      await this.finishTermination(docker, pod, pod.mounts.persistent ? podStorageDir(pod.id) : null);
      return;
    }
    if (pod.desiredStatus === 'EXITED') {
      // a stop that failed (and waited out its backoff, reconciler.ts) is recorded once it succeeds
      const stoppedNow = container?.running === true;
      // a stop the control plane made and explained ("stopped: …": a pod that cannot move off its host,
      // a drain's deadline; docs/gpu-health.md "Acting on it") keeps its reason and condition throughout
      const explained = pod.statusReason?.startsWith('stopped: ') === true;
      // the grace period is the container's (its SIGTERM handler may be saving work): the pod says so
      // while it lasts; a preemption's reason says it in its own words (docs/teams.md)
      if (stoppedNow && !pod.preemption && !explained)
        await this.write(pod, intent, () => ({
          statusReason: `stopping: the container was sent SIGTERM at ${new Date().toISOString()} and has up to ${STOP_GRACE_S} s to exit before it is killed; its GPUs are released`,
          conditions: [cond.stopping(STOP_GRACE_S)],
        }));
      // a preempted pod's container gets the preemption's grace between SIGTERM and SIGKILL (docs/teams.md)
      if (stoppedNow) await docker.stop(pod.id, pod.preemption?.graceSeconds);
      if (pod.preemption) {
        if (stoppedNow || pod.observed)
          await this.write(pod, intent, (p) =>
            p.preemption
              ? { observed: null, statusReason: `${preemptionReason(p.preemption)}; container stopped, GPUs released`, conditions: [cond.preempted(p.preemption.graceSeconds)] }
              : { observed: null },
          );
        return;
      }
      if (stoppedNow || pod.observed || (pod.status === 'EXITED' && pod.statusReason === 'stopped by user'))
        await this.write(pod, intent, (p) => {
          // a stop is reworded once done, except an explained one (above), whose reason stays
          const users = pod.status === 'EXITED' && !explained;
          return { observed: null, statusReason: users ? 'container stopped; GPUs released' : p.statusReason, conditions: users ? [cond.stopped()] : [] };
        });
      return;
    }
    if (!pod.allocated) return;
    // the container must match the pod's spec and GPUs; otherwise it is replaced
    if (container && (container.specKey !== specKey(pod) || container.gpus !== pod.gpuUuids.join(','))) {
      await docker.remove(container.id);
      container = null;
    }
    // its container ended with the host: the host restarted since it was seen running (docs/pods.md, "A host that restarted")
    const restarted = hostRestarted(host, pod, docker.bootId);
    if (container && !container.running && container.state !== 'created' && pod.status !== 'PROVISIONING' && !restarted) {
      await this.exitedOnItsOwn(docker, pod, intent, container);
      return;
    }
    if (!container || !container.running) {
      // a running pod whose container is gone: removed on the host by something else than gpufleet
      const vanished = !container && pod.status === 'RUNNING' && pod.observed?.containerId
        ? `its container ${pod.observed.containerId.slice(0, 12)} was removed from the host outside gpufleet; starting a new one`
        : null;
      const started = await this.bringUp(host, docker, pod, intent, container, restarted ?? vanished);
      if (!started) return;
      container = started;
    } else if (pod.restartGeneration > pod.restartedGeneration) {
      await docker.restart(pod.id);
      container = (await docker.observe()).find((c) => c.podId === pod.id) ?? container;
    }
    const m = metrics?.get(pod.id);
    const c = container;
    await this.write(pod, intent, (p) => {
      const observed: PodObserved = {
        containerId: c.id,
        containerStartedAt: c.startedAt,
        ports: runtimePorts(p, c, host.address),
        gpus: m ? m.gpus : (p.observed?.gpus ?? p.gpuUuids.map(() => ({ util: 0, memoryUtil: 0 }))),
        cpuUtil: m ? m.cpu : (p.observed?.cpuUtil ?? null),
        memoryUtil: m ? m.mem : (p.observed?.memoryUtil ?? null),
        observedAt: m ? new Date().toISOString() : (p.observed?.observedAt ?? new Date().toISOString()),
      };
      // whether its published 22/tcp answers as an SSH server (ssh-probe.ts), known for this container
      const sshAnswers = p.observed?.containerId === c.id ? p.observed.sshAnswers : undefined;
      if (sshAnswers !== undefined) observed.sshAnswers = sshAnswers;
      if (docker.bootId) observed.hostBootId = docker.bootId;
      const conditions = [cond.placed(host.id), cond.present(), cond.running()];
      return { status: 'RUNNING', statusReason: null, startedAt: c.startedAt, restartedGeneration: p.restartGeneration, observed, conditions };
    });
    this.sshProbes.check(host, pod, c.id, c.ports.find((x) => x.containerPort === 22 && x.proto === 'tcp')?.hostPort ?? undefined);
  }

  /** Start the kept container, or run a new one (pulling first when the host lacks the image). */
  private async bringUp(host: HostRecord, docker: HostDocker, pod: PodRecord, intent: Intent, container: ObservedContainer | null, why: string | null = null): Promise<ObservedContainer | null> {
    let r: { ok: boolean; error: string; container: ObservedContainer | null };
    if (container) {
      await this.beforeCreate(host.id);
      // a start with something to say (its host restarted) is STARTING with the reason while it lasts
      if (why) await this.write(pod, intent, () => ({ status: 'STARTING', statusReason: why, conditions: [cond.starting()] }));
      r = await docker.start(pod.id);
    } else {
      // its image is being pulled beside the pass (or the pull waits out a stall's backoff)
      if (this.pulls?.busy(pod)) return null;
      // a serverless worker also gets the protocol env (its token is opened here, never stored in env)
      const spec = runSpec(await withAccountKeys(this.s, pod), host.id, undefined, this.s.workers.containerEnv(pod));
      // a cached image another account pulled with its credentials is pulled again with this pod's
      // with several replicas, only while this one still holds the host's lease (checked beside the image)
      const image = async () => {
        const [refusedImageIds] = await Promise.all([refusedImages(this.s.store, host.id, pod.accountId), this.beforeCreate(host.id)]);
        return { ref: pod.image, refusedImageIds };
      };
      // the status write and the command overlap: STARTING is true from the moment docker is asked;
      // a command that failed waits for the write, so the reason written after it is not overwritten
      const [written, ran] = await Promise.allSettled([
        this.write(pod, intent, () => ({ status: 'STARTING', statusReason: why ?? 'starting container', conditions: [cond.starting()] })),
        image().then((i) => docker.runPod(spec, pod.id, i)),
      ]);
      if (ran.status === 'rejected') throw ran.reason;
      if (written.status === 'rejected') throw written.reason;
      const run = ran.value;
      if (run.needPull) {
        if (!this.pulls) throw new GpufleetError('INTERNAL', 'no image pulls attached to the pod reconciler');
        // the pull runs beside the pass; when it ends the host's pass is kicked and the run comes again
        // a registry on a private address, or a name leading to one, is never pulled from (core/registry-lookup.ts)
        const refused = await pullRefusal(pod.image, this.s.config.allowedRegistries ?? []);
        if (refused !== null) return this.fail(pod, intent, `image pull failed: ${refused}`, [cond.refusedByPolicy(), cond.imageUnavailable()]);
        const auth = await this.registryAuth(pod);
        // a digest the host caches privately for others must be shown to the registry (image-pull.ts)
        const verifyDigest = run.refused && pod.image.includes('@') ? { insecure: loopbackRegistry(pod.image) } : undefined;
        await this.pulls.request(host, pod, intent, { auth, verifyDigest });
        return null;
      }
      // a container of that name exists (a pass cut mid-way): the next pass observes and adopts it
      if (!run.ok && /already in use|Conflict/.test(run.error)) return null;
      r = run;
    }
    if (!r.ok || !r.container) return this.fail(pod, intent, `container did not start: ${runFailureReason(r.error)}`, [cond.startFailed()]);
    if (!r.container.running) {
      await this.exitedOnItsOwn(docker, pod, intent, r.container);
      return null;
    }
    return r.container;
  }

  private async exitedOnItsOwn(docker: HostDocker, pod: PodRecord, intent: Intent, c: ObservedContainer): Promise<void> {
    const ran = c.startedAt && c.finishedAt ? Date.parse(c.finishedAt) - Date.parse(c.startedAt) : 0;
    // killed by a signal gpufleet did not send (docker kill on the host, the OOM killer): said as such, not as a crash
    const killed = killedReason(c);
    if (killed) {
      await this.write(pod, intent, () => ({
        status: 'EXITED', desiredStatus: 'EXITED', allocated: false, gpuUuids: [], observed: null, statusReason: killed,
        conditions: [cond.killed(c.exitCode), cond.released('exited')],
      }));
      return;
    }
    const crashed = c.exitCode !== 0 && ran < CRASH_ON_START_MS;
    const logs = crashed ? await docker.logsTail(pod.id, 5) : '';
    await this.write(pod, intent, () => ({
      status: crashed ? 'ERROR' : 'EXITED',
      desiredStatus: 'EXITED',
      allocated: false,
      gpuUuids: [],
      observed: null,
      statusReason: crashed
        ? `container crashed on start (exit code ${c.exitCode}${c.error ? `, ${c.error}` : ''})${logs ? `: ${logs}` : ''}`
        : `container exited on its own with code ${c.exitCode}`,
      conditions: crashed ? [cond.crashed(c.exitCode), cond.released('failed')] : [cond.exited(c.exitCode), cond.released('exited')],
    }));
  }

  /**
   * A failure that belongs to this pod alone (a stored record docker cannot be given, a command that
   * could not be built): ERROR with the reason, GPUs released, like a container that cannot start.
   * A pod being terminated keeps its course.
   */
  async failPod(pod: PodRecord, err: unknown): Promise<void> {
    if (pod.desiredStatus === 'TERMINATED') return;
    const why = isGpufleetError(err) ? err.message : `internal error: ${err instanceof Error ? err.message : String(err)}`;
    await this.fail(pod, intentOf(pod), why, [cond.failed()]);
  }

  /** Its GPUs are still held by another pod's running container (gpu-handover.ts): it waits, and says so. */
  async waitingForGpus(pod: PodRecord): Promise<void> {
    const reason = 'waiting for its GPUs to be released by a container that is stopping';
    await this.write(pod, intentOf(pod), () => ({ statusReason: reason, conditions: [cond.pending()] }));
  }

  /** A step failed on the host and waits out a backoff (reconciler.ts): the reason says so; the status stays. */
  async retrying(pod: PodRecord, reason: string): Promise<void> {
    await this.write(pod, intentOf(pod), (p) => ({ statusReason: reason, conditions: [cond.retrying(p.status === 'RUNNING', reason)] }));
  }

  /**
   * ERROR with the reason, GPUs released (also for a pull that failed beside the pass, pod-pulls.ts);
   * `conditions` say what failed in our words (the reason may quote the tenant's container).
   */
  async fail(pod: Pick<PodRecord, 'id'>, intent: Intent, reason: string, conditions: ConditionUpdate<PodConditionType>[]): Promise<null> {
    await this.write(pod, intent, () => ({
      status: 'ERROR', desiredStatus: 'EXITED', allocated: false, gpuUuids: [], observed: null, statusReason: reason,
      conditions: [...conditions, cond.released('failed')],
    }));
    return null;
  }

  async finishTermination(docker: HostDocker, pod: PodRecord, storageDir: string | null): Promise<void> {
    if (storageDir) await docker.removeDir(storageDir);
    await this.write(pod, intentOf(pod), () => ({
      hostId: null, observed: null, allocated: false, gpuUuids: [], statusReason: 'terminated; container and storage removed',
      conditions: [cond.released('terminated'), cond.terminated()],
    }));
  }

  private async registryAuth(pod: PodRecord) {
    if (!pod.registry) return undefined;
    const { username, password } = await this.s.registries.credentials(pod.accountId, pod.registry);
    return { server: registryServer(pod.image), username, password };
  }

  private write(pod: Pick<PodRecord, 'id'>, intent: Intent, change: (p: PodRecord) => ObservedChange): Promise<boolean> {
    return writeObserved(this.s.store, pod.id, intent, change);
  }

  /**
   * Latest runtime metrics (docker stats, nvidia-smi) of the host's running pods. Sampling takes about a
   * second (docker stats measures over an interval), so it runs beside the pass, at most once per
   * interval, and a pass uses the last finished sample rather than waiting for one.
   */
  sampleMetrics(host: HostRecord, docker: HostDocker, containers: ObservedContainer[]): Map<string, PodMetrics> | null {
    const running = containers.filter((c) => c.running);
    const last = this.lastSample.get(host.id) ?? 0;
    // a GPU host is sampled with no pod running too: its idle GPUs are metrics as well (gpufleet_gpu_*)
    if ((running.length > 0 || host.facts.gpus.length > 0) && Date.now() - last >= this.metricsIntervalMs) {
      this.lastSample.set(host.id, Date.now());
      void this.sample(host, docker, running)
        .then((m) => this.samples.set(host.id, m))
        // the last finished sample stays in use; the next interval tries again
        .catch((err: unknown) => this.log?.warn({ err, hostId: host.id, code: isGpufleetError(err) ? err.code : 'INTERNAL' }, 'metrics sampling failed'));
    }
    return this.samples.get(host.id) ?? null;
  }

  private async sample(host: HostRecord, docker: HostDocker, running: ObservedContainer[]): Promise<Map<string, PodMetrics>> {
    const [stats, gpuCsv] = await Promise.all([
      docker.stats(running.map((c) => c.id)),
      host.facts.gpus.length ? docker.run0(GPU_METRICS_COMMAND) : Promise.resolve(''),
    ]);
    const sampled = parseGpuMetrics(gpuCsv);
    if (host.facts.gpus.length) this.observer?.gpusSampled(host.id, sampled);
    const byUuid = new Map(sampled.map((g) => [g.uuid, g]));
    const out = new Map<string, PodMetrics>();
    for (const c of running) {
      const s = stats.get(c.id);
      const gpus = c.gpus ? c.gpus.split(',').map((u) => ({ util: byUuid.get(u)?.util ?? 0, memoryUtil: byUuid.get(u)?.memoryUtil ?? 0 })) : [];
      out.set(c.podId, { cpu: s?.cpu ?? 0, mem: s?.mem ?? 0, gpus });
    }
    return out;
  }
}
