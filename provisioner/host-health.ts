// Heartbeats: every reconcile pass is one. A host that misses `unreachableAfter` passes in a row is
// UNREACHABLE; its pods keep their last observed status with a reason saying the host is not
// answering (never silently terminated), and everything converges on the next good pass.
import type { HostRecord } from '../model/index.ts';
import type { HostSelf } from './host-docker.ts';
import { isGpufleetError, podConditions, PROVISIONER_ACTOR, setCondition, withHostConditions } from '../model/index.ts';
import type { Store } from '../store/index.ts';

const SEEN_WRITE_EVERY_MS = 30_000;

export class HostHealth {
  constructor(
    private readonly store: Store,
    private readonly unreachableAfter: number,
  ) {}

  async missed(host: HostRecord, err: unknown): Promise<void> {
    const message = err instanceof Error ? err.message : String(err);
    const keyMismatch = isGpufleetError(err) && err.code === 'HOST_KEY_MISMATCH';
    await this.store.transact(async (tx) => {
      const h = await tx.get('hosts', host.id);
      if (!h) return;
      const missed = h.missedHeartbeats + 1;
      const unreachable = keyMismatch || missed >= this.unreachableAfter;
      const now = new Date().toISOString();
      const next: HostRecord = withHostConditions({
        ...h,
        missedHeartbeats: missed,
        unansweredSince: h.unansweredSince ?? now,
        status: unreachable ? 'UNREACHABLE' : h.status,
        statusReason: unreachable ? (keyMismatch ? message : `missed ${missed} heartbeats: ${message}`) : h.statusReason,
        rejectedHostKeySha256: keyMismatch ? String((err as { fields: Record<string, unknown> }).fields.presented ?? '') || null : h.rejectedHostKeySha256,
      }, now);
      tx.put('hosts', next);
      if (unreachable && h.status !== 'UNREACHABLE') {
        const since = h.lastSeenAt ?? 'enrollment';
        for (const p of await tx.list('pods', { hostId: h.id }))
          if (p.status !== 'TERMINATED') {
            // a container the pod's status says runs (or starts) is not known to any more
            const unknown = p.status === 'RUNNING' || p.status === 'STARTING';
            const conditions = unknown ? setCondition(p.conditions, podConditions.hostUnreachable(), now) : p.conditions;
            tx.put('pods', { ...p, statusReason: `host ${h.id} is unreachable (last seen ${since}); status ${p.status} is the last observed`, ...(conditions ? { conditions } : {}) });
          }
      }
    }, { actor: PROVISIONER_ACTOR });
  }

  /**
   * the host answered this pass; `self`: its kernel's boot id and its own address of the connection as
   * the pass read them (null: not read), kept on the record when they changed
   */
  async seen(host: HostRecord, self: HostSelf = { bootId: null, connectedAddress: null }): Promise<void> {
    const stale = !host.lastSeenAt || Date.now() - Date.parse(host.lastSeenAt) > SEEN_WRITE_EVERY_MS;
    const healthy = host.status !== 'UNREACHABLE' && host.missedHeartbeats === 0;
    const { bootId, connectedAddress } = self;
    const same = (bootId === null || host.bootId === bootId) && (connectedAddress === null || host.connectedAddress === connectedAddress);
    if (healthy && !stale && same) return;
    await this.store.transact(async (tx) => {
      const h = await tx.get('hosts', host.id);
      if (!h) return;
      tx.put('hosts', withHostConditions({
        ...h,
        missedHeartbeats: 0,
        unansweredSince: null,
        status: h.drained ? 'DRAINING' : 'READY',
        statusReason: null,
        // back after being lost: its moved pods' containers are removed by this pass (lost-hosts.ts)
        lost: null,
        lastSeenAt: new Date().toISOString(),
        // a new one is a restart: a host.restarted event (status-events.ts) and its pods started again (pod-reconciler.ts)
        ...(bootId !== null ? { bootId } : {}),
        // a host enrolled by name has its overlay address from it (model/rules/host-underlay.ts)
        ...(connectedAddress !== null ? { connectedAddress } : {}),
      }));
    }, { actor: PROVISIONER_ACTOR });
  }
}
