// Who sees which events, and the queries behind GET /v2/events and a pod's `events`: a caller sees
// the events of its account's pods and workers; an operator also sees every host's. Another
// account's resource is 404, exactly as if it did not exist.
import { GpufleetError, toEventView, type EventView, type FleetEvent } from '../../../model/index.ts';
import type { StoreReader } from '../../../store/index.ts';
import type { EventLog } from './event-log.ts';
import type { Principal } from '../../../model/index.ts';

/** events GET /v2/pods/{id} shows */
export const POD_VIEW_EVENTS = 5;
export const EVENT_LIST_DEFAULT_LIMIT = 100;
export const EVENT_LIST_MAX_LIMIT = 1000;

export interface EventQuery {
  resourceId?: string;
  /** RFC 3339: events at or after it */
  since?: string;
  /** the newest `limit` of the matching events */
  limit?: number;
  /** only events after the one this SSE Last-Event-ID names (every retained one when it is of an earlier run) */
  lastEventId?: string;
}

export interface EventFollow {
  /** the retained events the query matches, oldest first */
  backlog: FleetEvent[];
  /** stops the live delivery */
  stop(): void;
}

export class EventService {
  constructor(
    private readonly store: StoreReader,
    readonly log: EventLog,
  ) {}

  /** The retained events the caller may see that match, oldest first. */
  async list(principal: Principal, q: EventQuery): Promise<FleetEvent[]> {
    const keep = await this.filter(principal, q);
    const matched = this.log.all(keep);
    return q.lastEventId === undefined ? matched.slice(-(q.limit ?? EVENT_LIST_DEFAULT_LIMIT)) : matched;
  }

  /** `list`, then every new matching event as it happens, until stop(). */
  async follow(principal: Principal, q: EventQuery, deliver: (e: FleetEvent) => void): Promise<EventFollow> {
    const keep = await this.filter(principal, q);
    // backlog and subscription in one synchronous step: an event is in the backlog or delivered
    // live; one appended just before (its delivery still queued) is in both, hence the seq guard
    const backlog = this.log.all(keep);
    const shown = q.lastEventId === undefined ? backlog.slice(-(q.limit ?? EVENT_LIST_DEFAULT_LIMIT)) : backlog;
    let lastSeq = backlog.at(-1)?.seq ?? 0;
    const stop = this.log.subscribe((e) => {
      if (e.seq <= lastSeq || !keep(e)) return;
      lastSeq = e.seq;
      deliver(e);
    });
    return { backlog: shown, stop };
  }

  /** A pod's newest events for its view (the caller already owns the pod). */
  recentForPod(podId: string, n = POD_VIEW_EVENTS): EventView[] {
    return this.log.recent(podId, n).map(toEventView);
  }

  /** The events of one pod, live; the caller already owns the pod (core/pods/logs). */
  podEvents(podId: string): { backlog: readonly FleetEvent[]; subscribe: (deliver: (e: FleetEvent) => void) => () => void } {
    return {
      backlog: this.log.forResource(podId),
      subscribe: (deliver) => this.log.subscribe((e) => e.resourceId === podId && deliver(e)),
    };
  }

  visibleTo(principal: Principal, e: FleetEvent): boolean {
    // an operator also sees accounts' budget events: operators set the budgets (docs/teams.md)
    if (e.resourceType === 'host') return principal.operator;
    return e.accountId === principal.accountId || (e.resourceType === 'account' && principal.operator);
  }

  private async filter(principal: Principal, q: EventQuery): Promise<(e: FleetEvent) => boolean> {
    if (q.resourceId !== undefined) await this.assertVisible(principal, q.resourceId);
    const since = q.since === undefined ? null : Date.parse(q.since);
    const afterSeq = q.lastEventId === undefined ? 0 : this.log.seqAfter(q.lastEventId);
    return (e) =>
      this.visibleTo(principal, e) &&
      (q.resourceId === undefined || e.resourceId === q.resourceId) &&
      (since === null || Date.parse(e.time) >= since) &&
      e.seq > afterSeq;
  }

  /** 404 unless the caller may see the resource's events (an existing resource, or one with events kept). */
  private async assertVisible(principal: Principal, resourceId: string): Promise<void> {
    const kept = this.log.forResource(resourceId)[0];
    if (kept) {
      if (this.visibleTo(principal, kept)) return;
    } else {
      // an account's own events (budget thresholds): the account itself, or an operator
      if (resourceId === principal.accountId || (principal.operator && (await this.store.get('accounts', resourceId)))) return;
      const pod = await this.store.get('pods', resourceId);
      if (pod?.accountId === principal.accountId) return;
      if (principal.operator && (await this.store.get('hosts', resourceId))) return;
    }
    throw new GpufleetError('NOT_FOUND', `Resource ${resourceId} was not found.`);
  }
}
