// What every resolver gets: the caller (from principalOf, as every REST handler gets it), the services
// REST uses, and small per-request memos so a list of pods reads each host once.
import type { FastifyReply } from 'fastify';
import type { HostRecord } from '../../model/index.ts';
import { GpufleetError } from '../../model/index.ts';
import { hasScope } from '../../core/index.ts';
import type { Services } from '../../core/index.ts';
import type { Principal } from '../../model/index.ts';

export interface GqlContext {
  principal: Principal;
  services: Services;
  reply?: FastifyReply;
  /** the operation the request names, for its rate-limit cost */
  operationName?: string | undefined;
  /** per request: host records by id (null when gone) */
  hosts: Map<string, Promise<HostRecord | null>>;
  /** per request: anything computed once and read by many fields (the fleet snapshot for stock) */
  memo: Map<string, Promise<unknown>>;
}

export function newContext(principal: Principal, services: Services, operationName?: string): GqlContext {
  return { principal, services, operationName, hosts: new Map(), memo: new Map() };
}

export function hostOf(ctx: GqlContext, id: string): Promise<HostRecord | null> {
  let p = ctx.hosts.get(id);
  if (!p) ctx.hosts.set(id, (p = ctx.services.store.get('hosts', id).then((h) => h ?? null)));
  return p;
}

export function memo<T>(ctx: GqlContext, key: string, fn: () => Promise<T>): Promise<T> {
  let p = ctx.memo.get(key) as Promise<T> | undefined;
  if (!p) ctx.memo.set(key, (p = fn()));
  return p;
}

/** Mutations need a read_write key; the guard only checked `read` for the /graphql route. */
export function requireWrite(ctx: GqlContext): void {
  if (!hasScope(ctx.principal, 'read_write'))
    throw new GpufleetError('FORBIDDEN', `This API key has the ${ctx.principal.scope} scope; GraphQL mutations need read_write.`);
}

/** `input` arguments are nullable in the schema (clients declare nullable variables); absent is still an error. */
export function required<T>(input: T | null | undefined, field = 'input'): T {
  if (input === null || input === undefined)
    throw new GpufleetError('VALIDATION_FAILED', `The ${field} argument is required.`, { errors: [`$.${field}: is required`] });
  return input;
}

/** Clients send "" for "not set" (runpodctl sends empty strings as-is). */
export function str(v: string | null | undefined): string | undefined {
  return v === null || v === undefined || v === '' ? undefined : v;
}
