// The pods waiting for an image pull on their host (pull-scheduler.ts runs the pulls). The pass asks
// busy() and leaves such a pod be; request() queues its pull and returns at once. While it runs the
// pod stays PROVISIONING with the pull's progress in its reason (refreshed each second). When the pull
// ends: pulled → recorded (model/records/private-images.ts) and the host's pass kicked, so the pod starts at
// once; failed → ERROR in our words, docker's in the operator's log; stalled → the pod waits out a
// backoff and the pass pulls again, ERROR after MAX_STALLS. A pod the pass no longer wants pulled
// (stopped, terminated, moved, another image) drops out; a pull nobody waits for is cancelled.
import type { Logger } from 'pino';
import { podConditions as cond, type ConditionUpdate, type HostRecord, type PodConditionType, type PodRecord } from '../model/index.ts';
import type { Services } from '../core/index.ts';
import { writeObserved, type Intent, type ObservedChange } from './pod-status.ts';
import { recordPull } from './image-access.ts';
import { startPull, type PullAuth } from './image-pull.ts';
import { pullingReason } from './pull-progress.ts';
import { classifyPullError } from './pull-errors.ts';
import type { PullEnd, PullScheduler } from './pull-scheduler.ts';

/** stalls in a row before the pod is ERROR */
export const MAX_STALLS = 5;
const BACKOFF_MS = [10_000, 30_000, 60_000, 120_000];

interface Waiting {
  hostId: string;
  key: string;
  image: string;
  accountId: string;
  intent: Intent;
  /** our words for the credentials the pull uses ("with registry credential …") */
  as: string;
  stalls: number;
  /** performance.now() before which no new pull starts (after a stall) */
  retryAt: number;
  timer: NodeJS.Timeout | null;
  reason: string;
}

export interface PodPullHooks {
  kick(hostId: string): void;
  /** throws unless this replica still holds the host's lease (a pull adds to the host's cache) */
  beforeCreate(hostId: string): Promise<void>;
  /** ERROR with the reason; `conditions` say what failed in our words (PodReconciler.fail) */
  fail(podId: string, intent: Intent, reason: string, conditions: ConditionUpdate<PodConditionType>[]): Promise<void>;
  log?: Pick<Logger, 'warn' | 'info'> | undefined;
}

export class PodPulls {
  private readonly pods = new Map<string, Waiting>();
  private ticker: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly s: Services,
    private readonly scheduler: PullScheduler,
    private readonly hooks: PodPullHooks,
  ) {}

  /** A pull for this pod is queued, running, or waiting out a stall's backoff: nothing to do now. */
  busy(pod: PodRecord): boolean {
    const w = this.pods.get(pod.id);
    if (!w) return false;
    if (w.image !== pod.image || w.hostId !== pod.hostId) {
      this.drop(pod.id);
      return false;
    }
    return w.retryAt > performance.now() || this.scheduler.state(w.hostId, w.key) !== null;
  }

  /** Queues the pod's pull (joining one of the same image and credentials) and returns at once. */
  async request(host: HostRecord, pod: PodRecord, intent: Intent, spec: { auth?: PullAuth | undefined; verifyDigest?: { insecure: boolean } | undefined }): Promise<void> {
    if (this.stopped) return;
    const as = spec.auth ? `with registry credential ${pod.registry}` : 'with no registry credential on the pod';
    // credentials are the account's own: only an anonymous pull is shared across accounts
    const key = [pod.image, spec.auth ? `${pod.accountId}/${pod.registry}` : '-', spec.verifyDigest ? 'verify' : ''].join('\n');
    const prior = this.pods.get(pod.id);
    if (prior?.key !== key) this.drop(pod.id);
    const w: Waiting = { hostId: host.id, key, image: pod.image, accountId: pod.accountId, intent, as, stalls: prior?.key === key ? prior.stalls : 0, retryAt: 0, timer: null, reason: '' };
    this.pods.set(pod.id, w);
    const target = this.s.fleet.target(host);
    this.scheduler.submit(
      {
        hostId: host.id,
        key,
        accountId: pod.accountId,
        start: async (moved) => {
          await this.hooks.beforeCreate(host.id);
          return startPull(this.s.sshPool, target, { image: pod.image, auth: spec.auth, verifyDigest: spec.verifyDigest }, moved);
        },
      },
      pod.id,
      (end) => void this.ended(pod.id, w, end).catch((err: unknown) => this.hooks.log?.warn({ err, podId: pod.id }, 'pull outcome not recorded')),
    );
    await this.refresh(pod.id, w);
    this.tick();
  }

  /** Pods on `hostId` not in `wanted` no longer wait for a pull (their pull may be cancelled). */
  retain(hostId: string, wanted: ReadonlySet<string>): void {
    for (const [podId, w] of this.pods) if (w.hostId === hostId && !wanted.has(podId)) this.drop(podId);
  }

  /** Cancels every pull; resolves once they have ended on the hosts (before the SSH connections close). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = null;
    for (const w of this.pods.values()) if (w.timer) clearTimeout(w.timer);
    this.pods.clear();
    await this.scheduler.stopAll();
  }

  private drop(podId: string): void {
    const w = this.pods.get(podId);
    if (!w) return;
    this.pods.delete(podId);
    if (w.timer) clearTimeout(w.timer);
    this.scheduler.drop(w.hostId, w.key, podId);
  }

  /** Refreshes the reasons of pulling pods each second, while any pod waits. */
  private tick(): void {
    if (this.ticker) return;
    this.ticker = setInterval(() => {
      if (this.pods.size === 0) {
        clearInterval(this.ticker!);
        this.ticker = null;
        return;
      }
      for (const [podId, w] of this.pods) void this.refresh(podId, w);
    }, 1000);
    this.ticker.unref();
  }

  private async refresh(podId: string, w: Waiting): Promise<void> {
    const state = this.scheduler.state(w.hostId, w.key);
    if (state === null) return; // ended, or waiting out a backoff (its reason is written once)
    const reason = state === 'queued' ? `waiting for a free pull slot on the host (image ${w.image})` : pullingReason(w.image, this.scheduler.summary(w.hostId, w.key));
    if (reason === w.reason) return;
    w.reason = reason;
    const pulling = state === 'queued' ? cond.pullQueued() : cond.pulling();
    await this.write(podId, w.intent, (p) => (p.status === 'PROVISIONING' || p.status === 'STARTING' ? { status: 'PROVISIONING', statusReason: reason, conditions: [pulling] } : {}));
  }

  private async ended(podId: string, w: Waiting, end: PullEnd): Promise<void> {
    if (this.pods.get(podId) !== w) return; // dropped, or asked again since
    if (end.kind === 'stalled') {
      w.stalls++;
      this.hooks.log?.warn({ podId, hostId: w.hostId, stalls: w.stalls, output: end.output }, 'image pull stalled');
      const stallS = Math.round(this.scheduler.settings.stallMs / 1000);
      if (w.stalls >= MAX_STALLS) {
        this.pods.delete(podId);
        await this.hooks.fail(podId, w.intent, `image pull stalled ${w.stalls} times (${w.as}): no progress for ${stallS} s each time`, [cond.pullStalledOut(w.stalls), cond.imageUnavailable()]);
        return;
      }
      const wait = BACKOFF_MS[Math.min(w.stalls - 1, BACKOFF_MS.length - 1)]!;
      w.retryAt = performance.now() + wait;
      w.timer = setTimeout(() => this.hooks.kick(w.hostId), wait + 50);
      w.timer.unref();
      w.reason = `image pull stalled (no progress for ${stallS} s); trying again in ${Math.round(wait / 1000)} s`;
      await this.write(podId, w.intent, () => ({ status: 'PROVISIONING', statusReason: w.reason, conditions: [cond.pullStalled(stallS, Math.round(wait / 1000))] }));
      return;
    }
    this.pods.delete(podId);
    if (end.kind === 'pulled') {
      await recordPull(this.s.store, w.hostId, end.imageId, w.accountId, w.key.split('\n')[1] !== '-');
      this.hooks.kick(w.hostId);
    } else if (end.kind === 'failed') {
      // docker's words can carry what a registry (or anything it reached) said: never to the tenant
      this.hooks.log?.warn({ podId, hostId: w.hostId, output: end.output }, 'image pull failed');
      const why = classifyPullError(end.output).reason;
      await this.hooks.fail(podId, w.intent, `image pull failed (${w.as}): ${why}`, [cond.pullFailed(why), cond.imageUnavailable()]);
    } else if (end.kind === 'interrupted') {
      this.hooks.log?.info({ podId, hostId: w.hostId, err: end.cause }, 'image pull interrupted; the next pass asks again');
      this.hooks.kick(w.hostId);
    }
  }

  private write(podId: string, intent: Intent, change: (p: PodRecord) => ObservedChange): Promise<boolean> {
    return writeObserved(this.s.store, podId, intent, change);
  }
}
