// Pod operations shared by REST and GraphQL: create (with templates, placement and idempotency),
// read, update, actions and delete. Everything a request changes happens in one store transaction.
import { createHash, randomBytes } from 'node:crypto';
import { canonicalJson, GpufleetError } from '../../model/index.ts';
import type { PodCreateInput, PodUpdateInput } from '../../model/index.ts';
import { validatePodAction, validatePodCreate, validatePodUpdate } from '../../model/index.ts';
import { actionConditions, actionsFor, settleMove, transition } from '../../model/index.ts';
import type { PodAction, PodRecord, PodStatus } from '../../model/index.ts';
import { fail400, isInterruptible } from '../../model/index.ts';
import { holdsCompute, actorOf, SYSTEM_ACTOR, type EventView } from '../../model/index.ts';
import type { Store, StoreTx } from '../../store/index.ts';
import { accruePod } from '../billing/index.ts';
import { buildPodRecord, containerConfigChanged } from './pod-builder.ts';
import { dueTimer } from './pod-timers.ts';
import { stillStopping, waitForStop } from './pod-stopping.ts';
import { changeInProgress, dryRunAnswer, networkVolumeDataCenter, resizeInPlace, resizes, type DryRunPlacement } from './pod-resize.ts';
import { checkRegistry } from '../images/index.ts';
import { checkImageRegistry } from '../images/index.ts';
import { cudaVersionsAtLeast } from '../hosts/index.ts';
import type { Placer, PodPlacementRequest } from '../hosts/index.ts';
import type { Admission } from '../quotas/index.ts';
import type { Principal } from '../../model/index.ts';
import { globalNetworkSettings } from '../../model/index.ts';
import { GlobalNetworking } from './global-networking.ts';

/** Placement choices GraphQL pod inputs carry and the v2 body has no field for (cloudType ALL, minVcpuCount, minMemoryInGb). */
export type PlacementOptions = Pick<PodPlacementRequest, 'cloud' | 'minVcpu' | 'minMemoryGb'>;

/** GraphQL's stopAfter / terminateAfter, parsed (pod-timers.ts): RFC 3339 UTC instants. */
export interface PodTimers {
  stopAfter?: string;
  terminateAfter?: string;
}

/** What GraphQL pod inputs carry beside the v2 body: placement options, a CUDA minimum (cuda-versions.ts) and timers. */
export type PodCreateOptions = PlacementOptions & { minCudaVersion?: string; timers?: PodTimers };

export interface PodListFilter {
  status?: PodStatus;
  name?: string;
  image?: string;
  gpuTypeId?: string;
  dataCenterId?: string;
  templateId?: string;
  tag?: Record<string, string>;
  includeTerminated?: boolean;
}

const POD_ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function podId(): string {
  const bytes = randomBytes(14);
  let id = '';
  for (const b of bytes) id += POD_ID_ALPHABET[b % POD_ID_ALPHABET.length];
  return id;
}

export class PodService {
  constructor(
    private readonly store: Store,
    private readonly placer: Placer,
    private readonly events?: { recentForPod(podId: string): EventView[] },
    /** GPUFLEET_ALLOWED_REGISTRIES: registries an image may name beyond the public ones (image-policy.ts) */
    private readonly allowedRegistries: readonly string[] = [],
    /** per-account limits, monthly budget and credits, checked before a placed pod is written (core/quotas) */
    private readonly admission?: Admission,
    /** GPUFLEET_OVERLAY_CIDR, GPUFLEET_INTERNAL_DOMAIN, GPUFLEET_GLOBAL_NETWORK_EXCLUDE (docs/networking.md) */
    readonly network: GlobalNetworking = new GlobalNetworking(globalNetworkSettings()),
  ) {}

  /** A transaction on the caller's behalf: the events it causes name the caller's key as actor. */
  private transactAs<T>(principal: Principal, fn: (tx: StoreTx) => Promise<T> | T): Promise<T> {
    return this.store.transact(fn, { actor: actorOf(principal) });
  }

  /** The pod's newest events, for a single pod's view (REST); the caller already read the pod. */
  recentEvents(podId: string): EventView[] {
    return this.events?.recentForPod(podId) ?? [];
  }

  /** Validates, merges the template, places and stores a pod. A replayed Idempotency-Key returns the first result. */
  async create(
    principal: Principal,
    body: unknown,
    idempotencyKey?: string,
  ): Promise<{ pod: PodRecord; replayed: boolean }> {
    const input = validatePodCreate(body);
    if (input.globalNetworking) await this.network.prepareAccount(this.store, principal.accountId);
    // keys sorted: a retry that orders its keys differently is the same request
    const bodyHash = createHash('sha256').update(canonicalJson(body)).digest('hex');
    const idemId = idempotencyKey ? `${principal.accountId}:${idempotencyKey}` : null;
    return this.transactAs(principal, async (tx) => {
      if (idemId) {
        const seen = await tx.get('idempotency', idemId);
        if (seen) {
          if (seen.bodyHash !== bodyHash)
            throw new GpufleetError('IDEMPOTENCY_MISMATCH', 'This Idempotency-Key was used with a different request body.', {
              errors: ['$: differs from the request first sent with this Idempotency-Key'],
            });
          const pod = await tx.get('pods', (seen.response as { id: string }).id);
          if (pod) return { pod, replayed: true };
        }
      }
      const pod = await this.createIn(tx, principal, input);
      if (idemId)
        tx.put('idempotency', {
          id: idemId,
          accountId: principal.accountId,
          bodyHash,
          statusCode: 201,
          response: { id: pod.id },
          createdAt: pod.createdAt,
        });
      return { pod, replayed: false };
    });
  }

  /** GraphQL creation: the same validation and rules as `create`, plus options REST has no field for. */
  async createWithPlacement(principal: Principal, body: unknown, options: PodCreateOptions = {}): Promise<PodRecord> {
    const input = validatePodCreate(body);
    if (input.globalNetworking) await this.network.prepareAccount(this.store, principal.accountId);
    const { minCudaVersion, timers, ...placement } = options;
    return this.transactAs(principal, async (tx) => {
      const cuda = input.gpu && (await cudaVersionsAtLeast(tx, minCudaVersion, input.gpu.allowedCudaVersions, 'pod'));
      const withCuda = input.gpu && cuda ? { ...input, gpu: { ...input.gpu, allowedCudaVersions: cuda } } : input;
      return this.createIn(tx, principal, withCuda, placement, timers);
    });
  }

  /** Creation inside a caller's transaction (GraphQL and the constructs reuse it). */
  async createIn(tx: StoreTx, principal: Principal, input: PodCreateInput, options: PlacementOptions = {}, timers: PodTimers = {}): Promise<PodRecord> {
    const now = new Date().toISOString();
    const { draft, placement } = await this.planCreate(tx, principal, input, now, options);
    let pod: PodRecord = {
      ...draft,
      ...(timers.stopAfter ? { stopAfter: timers.stopAfter } : {}),
      ...(timers.terminateAfter ? { terminateAfter: timers.terminateAfter } : {}),
      ...placement,
      allocated: true,
      statusReason: `placed on host ${placement.hostId}; waiting for the provisioner to pull and start it`,
      conditions: actionConditions({ hostId: placement.hostId }, 'create', now),
    };
    if (input.globalNetworking) pod = await this.network.apply(tx, pod, true);
    tx.put('pods', pod);
    await accruePod(tx, null, pod, now);
    return pod;
  }

  /**
   * `POST /v2/pods?dryRun=true` (docs/pods.md#dry-run): every check a create makes, placement included,
   * and nothing written. `replaces`: a pod of the caller's whose name and compute count as free (what
   * a stack's replacement of it could use). Refusals are the create's own errors.
   */
  async dryRun(principal: Principal, body: unknown, replaces?: string): Promise<DryRunPlacement> {
    const input = validatePodCreate(body);
    return this.transactAs(principal, async (tx) => {
      if (replaces !== undefined && !usersPod(await tx.get('pods', replaces), principal)) throw notFound(replaces);
      const { draft, placement } = await this.planCreate(tx, principal, input, new Date().toISOString(), { dryRun: true }, replaces);
      return dryRunAnswer(draft, placement, replaces);
    });
  }

  /** What create and its dry run share: the record to be, its name checked, and where it would go. */
  private async planCreate(tx: StoreTx, principal: Principal, input: PodCreateInput, now: string, options: PlacementOptions & Pick<PodPlacementRequest, 'dryRun'>, replaces?: string) {
    checkImageRegistry(input.image, this.allowedRegistries, 'pod');
    const { pod: draft, networkVolumeDc } = await buildPodRecord(tx, principal, input, podId(), now);
    await this.assertNameFree(tx, draft, replaces);
    let dataCenterIds = networkVolumeDc ? [networkVolumeDc] : draft.dataCenterIds;
    // a globally-networked pod goes only where the global network is (docs/networking.md)
    if (input.globalNetworking) dataCenterIds = await this.network.placeableDataCenters(tx, dataCenterIds);
    const placement = await this.placer.place(tx, { ...options, pod: draft, pinnedHostId: null, dataCenterIds, ...(replaces ? { replacing: replaces } : {}) });
    await this.admit(tx, draft, placement.costPerHr, 'pod', replaces);
    return { draft, placement };
  }

  async get(principal: Principal, id: string): Promise<PodRecord> {
    const pod = await this.store.get('pods', id);
    if (!usersPod(pod, principal)) throw notFound(id);
    return pod;
  }

  async list(principal: Principal, f: PodListFilter = {}): Promise<PodRecord[]> {
    const pods = await this.store.list('pods', { accountId: principal.accountId });
    return pods
      .filter(
        (p) =>
          p.endpointId === undefined &&
          (f.status ? p.status === f.status : f.includeTerminated || p.status !== 'TERMINATED') &&
          (f.name === undefined || p.name === f.name) &&
          (f.image === undefined || p.image === f.image) &&
          (f.gpuTypeId === undefined || p.gpu?.id === f.gpuTypeId) &&
          (f.dataCenterId === undefined || p.dataCenterId === f.dataCenterId) &&
          (f.templateId === undefined || p.template === f.templateId) &&
          Object.entries(f.tag ?? {}).every(([k, v]) => p.tags[k] === v),
      )
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
  }

  async update(principal: Principal, id: string, body: unknown): Promise<PodRecord> {
    if ((body as { globalNetworking?: unknown } | null)?.globalNetworking === true) await this.network.prepareAccount(this.store, principal.accountId);
    return this.transactAs(principal, async (tx) => {
      const pod = await tx.get('pods', id);
      if (!usersPod(pod, principal)) throw notFound(id);
      const input: PodUpdateInput = validatePodUpdate(body, pod.mounts);
      checkImageRegistry(input.image, this.allowedRegistries, 'pod update');
      if (pod.status === 'TERMINATED') throw new GpufleetError('INVALID_TRANSITION', `Pod ${id} is terminated and cannot be changed.`);
      let next: PodRecord = { ...pod, updatedAt: new Date().toISOString() };
      if (input.name !== undefined) next.name = input.name;
      if (input.image !== undefined) next.image = input.image;
      if (input.args !== undefined) next.args = input.args;
      if (input.disk !== undefined) next.disk = input.disk;
      if (input.ports !== undefined) next.ports = input.ports;
      if (input.env !== undefined) next.env = input.env;
      if (input.registry !== undefined) next.registry = await checkRegistry(tx, principal, input.registry);
      if (input.locked !== undefined) next.locked = input.locked;
      if (input.tags !== undefined) next.tags = input.tags;
      if (input.mounts?.persistent) next.mounts = { persistent: input.mounts.persistent };
      if (input.mounts?.network) next.mounts = { network: input.mounts.network };
      if (input.name !== undefined) await this.assertNameFree(tx, next);
      // on or off while the pod runs: the provisioner attaches or detaches it, no restart (docs/networking.md)
      if (input.globalNetworking !== undefined && input.globalNetworking !== (pod.globalNetworking === true)) {
        if (input.globalNetworking) this.network.assertPodInNetwork(pod);
        next = await this.network.apply(tx, next, input.globalNetworking);
      }
      const resized = input.gpu !== undefined && resizes(pod, input.gpu.count);
      if (containerConfigChanged(pod, next) || resized) {
        // recreating the container wipes its disk: a reset, which `locked` prevents (spec 2.1)
        if (pod.locked && next.locked && pod.status !== 'EXITED' && pod.status !== 'ERROR')
          throw new GpufleetError('LOCKED', `Pod ${id} is locked; changing image, args, env, ports, disk, registry or gpu.count would recreate its container. Unlock it first.`);
        next.specGeneration += 1;
      }
      const now = next.updatedAt;
      const done = resized ? await resizeInPlace(tx, this.placer, pod, next, input.gpu!.count, now) : next;
      // a placed pod that grows is new work: the pod at its new size, its old size counted as free
      if (resized && done.allocated && input.gpu!.count > (pod.gpu?.count ?? 0)) await this.admit(tx, done, done.costPerHr, 'resize', pod.id);
      const shown = containerConfigChanged(pod, next) && !resized ? changeInProgress(pod, done, now) : done;
      tx.put('pods', shown);
      await accruePod(tx, pod, shown, now);
      return shown;
    });
  }

  /** Spec 3.2. Returns the pod after the action (TERMINATED for terminate). */
  async act(principal: Principal, id: string, body: unknown): Promise<PodRecord> {
    const { action } = validatePodAction(body);
    return this.applyAction(principal, id, action);
  }

  /**
   * `bidPerGpu`: a start at a new bid (GraphQL podBidResume), for interruptible pods only; an
   * interruptible pod started without one bids what it bid before (docs/teams.md).
   */
  async applyAction(principal: Principal, id: string, action: PodAction, opts: { bidPerGpu?: number } = {}): Promise<PodRecord> {
    return this.transactAs(principal, async (tx) => {
      const pod = await tx.get('pods', id);
      if (!usersPod(pod, principal)) throw notFound(id);
      if (opts.bidPerGpu !== undefined && !isInterruptible(pod))
        fail400(`Pod ${id} is an on-demand pod; only an interruptible pod is started with a bid.`, ['$.input.bidPerGpu: the pod is not interruptible']);
      return this.actIn(tx, pod, action, opts.bidPerGpu !== undefined ? { bidPerGpu: opts.bidPerGpu } : {});
    });
  }

  /**
   * Stops every placed pod of the account (not its serverless workers; `paidOnly`: only those costing money), as `stop` does but whatever
   * `locked` says: the account's credits or monthly budget ran out (core/quotas/spend-guard.ts).
   * Disks and volumes are kept; the pod can be started again once admission lets it. Answers how many.
   */
  async stopAllOf(accountId: string, reason: string, nowMs: number, opts: { paidOnly?: boolean } = {}): Promise<number> {
    const now = new Date(nowMs).toISOString();
    return this.store.transact(
      async (tx) => {
        let n = 0;
        for (const pod of await tx.list('pods', { accountId })) {
          if (pod.endpointId !== undefined || !pod.allocated || !transition(pod.status, 'stop', false)) continue;
          if (opts.paidOnly && !(pod.costPerHr > 0)) continue;
          const t = transition(pod.status, 'stop', false)!;
          const next: PodRecord = { ...pod, status: t.status, desiredStatus: t.desiredStatus, statusReason: reason, allocated: false, gpuUuids: [], updatedAt: now };
          next.conditions = actionConditions(next, 'stop', now);
          tx.put('pods', next);
          await accruePod(tx, pod, next, now);
          n++;
        }
        return n;
      },
      { actor: SYSTEM_ACTOR },
    );
  }

  /**
   * The pod's timer that is due at `now` (docs/pods.md#stop-and-terminate-timers), carried out as the
   * system: terminate before stop; a timer with nothing left to do is cleared. False when none was due.
   */
  async fireTimer(podId: string, now = Date.now()): Promise<boolean> {
    return this.store.transact(async (tx) => {
      const pod = await tx.get('pods', podId);
      const due = pod ? dueTimer(pod, now) : null;
      if (!pod || !due) return false;
      const at = due === 'terminate' ? pod.terminateAfter! : pod.stopAfter!;
      const cleared: PodRecord = { ...pod, stopAfter: null, ...(due === 'terminate' ? { terminateAfter: null } : {}) };
      // a pod already stopped (or terminated) only loses its timer; a timer outranks `locked`: its owner set it
      if (due === 'stop' ? !holdsCompute(pod.status) : pod.status === 'TERMINATED') {
        tx.put('pods', { ...cleared, updatedAt: new Date(now).toISOString() });
        return true;
      }
      const reason = `${due === 'stop' ? 'stopped' : 'terminated'}: its ${due}After time ${at} was reached`;
      await this.actIn(tx, cleared, due, { ignoreLock: true, reason });
      return true;
    }, { actor: SYSTEM_ACTOR });
  }

  /** `ignoreLock`, `reason`: a timer's action (fireTimer); `bidPerGpu`: an interruptible pod's new bid (applyAction) */
  private async actIn(tx: StoreTx, pod: PodRecord, action: PodAction, opts: { ignoreLock?: boolean; reason?: string; bidPerGpu?: number } = {}): Promise<PodRecord> {
    const id = pod.id;
    const t = transition(pod.status, action, pod.locked && !opts.ignoreLock);
    if (!t) {
      const why = pod.locked && action === 'stop' ? ' (the pod is locked)' : '';
      throw new GpufleetError(
        'INVALID_TRANSITION',
        `Cannot ${action} pod ${id} while it is ${pod.status}${why}; valid actions: ${actionsFor(pod.status, pod.locked).join(', ') || 'none'}.`,
        { fields: { status: pod.status, action } },
      );
    }
    const now = new Date().toISOString();
    let next: PodRecord = { ...pod, status: t.status, desiredStatus: t.desiredStatus, statusReason: opts.reason ?? t.statusReason, updatedAt: now };
    if (t.restart) next.restartGeneration += 1;
    if (t.place) {
      // a start ends a preemption; a new bid replaces the old one before the pod is placed at it
      if (pod.preemption) next.preemption = null;
      if (opts.bidPerGpu !== undefined) next.bidPerGpu = opts.bidPerGpu;
    }
    if (action === 'stop' || action === 'terminate') next = { ...next, allocated: false, gpuUuids: [] };
    if (action === 'terminate') {
      next.terminatedAt = now;
      // the address was the pod's for its life: free again (docs/networking.md)
      delete next.overlayIp;
    }
    if (t.place) {
      const pinnedHostId = pod.mounts.persistent ? pod.hostId : null;
      const volumeDc = await networkVolumeDataCenter(tx, pod);
      const asked = volumeDc ? [volumeDc] : pod.dataCenterIds;
      const placement = await this.placer.place(tx, {
        pod: next,
        pinnedHostId,
        dataCenterIds: pod.globalNetworking ? await this.network.placeableDataCenters(tx, asked) : asked,
      });
      await this.admit(tx, next, placement.costPerHr, 'pod start');
      next = { ...next, ...placement, allocated: true, statusReason: `placed on host ${placement.hostId}; waiting for the provisioner` };
    }
    next.conditions = actionConditions(next, action, now);
    next = settleMove(next);
    // its previous container still has its stop grace period on that host: the start waits for it, and says so
    if (t.place && stillStopping(pod, next.hostId)) next = waitForStop(pod, next, now);
    tx.put('pods', next);
    await accruePod(tx, pod, next, now);
    return next;
  }

  /** DELETE: terminate from any state; deleting a terminated pod again is a no-op. */
  async delete(principal: Principal, id: string): Promise<void> {
    const pod = await this.get(principal, id);
    if (pod.status !== 'TERMINATED') await this.applyAction(principal, id, 'terminate');
  }

  /**
   * New work for the account: refused here (quota, budget, credits) before the placed pod is written.
   * `replaces`: a pod whose own use counts as free (a dry run of its replacement, a resize of it).
   */
  private async admit(tx: StoreTx, pod: PodRecord, costPerHr: number, what: string, replaces?: string): Promise<void> {
    await this.admission?.admit(tx, {
      accountId: pod.accountId,
      what,
      ...(replaces ? { replaces } : {}),
      ...(pod.gpu ? { gpu: { typeId: pod.gpu.id, count: pod.gpu.count, interruptible: isInterruptible(pod) } } : {}),
      pods: 1,
      spendPerHour: costPerHr,
      needsCredits: true,
    });
  }

  /** `replaces`: a pod whose name counts as free (a dry run of a stack's replacement of it) */
  private async assertNameFree(tx: StoreTx, pod: PodRecord, replaces?: string): Promise<void> {
    const clash = (await tx.list('pods', { accountId: pod.accountId, name: pod.name })).find(
      (p) => p.id !== pod.id && p.id !== replaces && p.status !== 'TERMINATED' && p.endpointId === undefined,
    );
    if (clash)
      throw new GpufleetError('CONFLICT', `A pod named "${pod.name}" already exists in this account (${clash.id}).`, {
        errors: ['$.name: must be unique within the account'],
      });
  }
}

/**
 * The caller's own pod. A serverless worker is a pod record too (model/records/worker.ts), but users see it
 * only under its endpoint: as a pod it does not exist.
 */
function usersPod(pod: PodRecord | undefined, principal: Principal): pod is PodRecord {
  return pod !== undefined && pod.accountId === principal.accountId && pod.endpointId === undefined;
}

function notFound(id: string): GpufleetError {
  return new GpufleetError('NOT_FOUND', `Pod ${id} was not found.`);
}

