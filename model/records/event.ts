// Events (spec part 6 leaves them open; docs/events.md): every status change of a pod, a host or a
// serverless worker, with when, why and who. Kept by core/observability/events (in memory and in their own file
// beside the store, docs/events.md), not in the store.

export type EventResourceType = 'pod' | 'host' | 'worker' | 'account';

export interface FleetEvent {
  /** `<run>-<seq>`: the SSE `id` of GET /v2/events; `run` tells a resume from an earlier run apart */
  id: string;
  /** increasing within one control plane run */
  seq: number;
  /** RFC 3339, milliseconds */
  time: string;
  resourceType: EventResourceType;
  resourceId: string;
  /** the resource's owner (pods, workers); null for hosts, which only operators see */
  accountId: string | null;
  /** `<resourceType>.<new status, lower case>` (`pod.running`, `host.unreachable`), or `host.removed` */
  type: string;
  /** the status after the change; null when the resource was removed */
  status: string | null;
  /** null when the resource first appeared */
  previousStatus: string | null;
  /** the resource's statusReason after the change */
  reason: string | null;
  /** `user:<key id>`, `operator`, `provisioner` or `system` (docs/events.md) */
  actor: string;
  /** `console`: the key acted through a web console session (docs/console.md, "Audit trail") */
  via?: 'console';
  /** with `via`: the prefix of the key the session was signed in with */
  keyPrefix?: string;
}

/** Who made a change (FleetEvent.actor); the store's TxOptions.actor carries it to the events. */
export const PROVISIONER_ACTOR = 'provisioner';
/** fleet administration (enroll, drain, remove a host); only operator keys reach it */
export const OPERATOR_ACTOR = 'operator';
/** a transaction that named no actor */
export const SYSTEM_ACTOR = 'system';
/** an API key acting on its account's resources (REST, GraphQL) */
export const userActor = (keyId: string): string => `user:${keyId}`;

/** how TxOptions.actor carries a console session's key prefix to the events its commit makes */
const CONSOLE_ACTOR = /^(user:\S+)\|console:(\S*)$/;

/**
 * The actor of a change a caller makes: `user:<key id>`, tagged `|console:<key prefix>` when it came
 * through a web console session (the tag travels with the store's commit, PostgreSQL's NOTIFY
 * included, and actorFields takes it off again).
 */
export function actorOf(p: { keyId: string; via?: 'console'; keyPrefix?: string }): string {
  return p.via === 'console' ? `${userActor(p.keyId)}|console:${p.keyPrefix ?? ''}` : userActor(p.keyId);
}

/** An event's actor fields from an actor string: `actor`, and `via` / `keyPrefix` for a console session's. */
export function actorFields(actor: string): Pick<FleetEvent, 'actor' | 'via' | 'keyPrefix'> {
  const m = CONSOLE_ACTOR.exec(actor);
  return m ? { actor: m[1]!, via: 'console', keyPrefix: m[2]! } : { actor };
}

export interface EventView {
  id: string;
  time: string;
  resourceType: EventResourceType;
  resourceId: string;
  type: string;
  status: string | null;
  previousStatus: string | null;
  reason: string | null;
  actor: string;
  via?: 'console';
  keyPrefix?: string;
}

export function toEventView(e: FleetEvent): EventView {
  return {
    id: e.id,
    time: e.time,
    resourceType: e.resourceType,
    resourceId: e.resourceId,
    type: e.type,
    status: e.status,
    previousStatus: e.previousStatus,
    reason: e.reason,
    actor: e.actor,
    ...(e.via !== undefined ? { via: e.via, keyPrefix: e.keyPrefix ?? '' } : {}),
  };
}

const nullableString = { type: ['string', 'null'] } as const;

export const eventViewSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'time', 'resourceType', 'resourceId', 'type', 'status', 'previousStatus', 'reason', 'actor'],
  properties: {
    id: { type: 'string' },
    time: { type: 'string', format: 'date-time' },
    resourceType: { type: 'string', enum: ['pod', 'host', 'worker', 'account'] },
    resourceId: { type: 'string' },
    type: { type: 'string' },
    status: nullableString,
    previousStatus: nullableString,
    reason: nullableString,
    actor: { type: 'string' },
    via: { type: 'string', enum: ['console'] },
    keyPrefix: { type: 'string' },
  },
} as const;
