// The console's audit trail (docs/console.md, "Audit trail"): every state-changing request that a
// console session authenticated, and every WebSocket it opened, becomes an event of the account
// (`console.action`, `console.sign_in`), naming the key's prefix (`via: "console"`, `keyPrefix`), the
// method, the path and the answer's status. A GraphQL POST counts when it is a mutation.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { getOperationAST, parse } from 'graphql';
import type { EventService } from '../../core/index.ts';
import { userActor, type ConsoleSessionRecord, type Principal } from '../../model/index.ts';
import { consoleSessionOf } from '../auth/request-guard.ts';
import { isStateChanging } from '../auth/console-cookie.ts';

export function auditConsoleAction(events: EventService, p: Principal, s: ConsoleSessionRecord, type: string, what: string, status: number): void {
  events.log.append({
    resourceType: 'account',
    resourceId: p.accountId,
    accountId: p.accountId,
    type,
    status: String(status),
    previousStatus: null,
    reason: `${what} → ${status}`,
    actor: userActor(p.keyId),
    via: 'console' as const,
    keyPrefix: s.keyPrefix,
  });
}

/** Appends an audit event when a request the session authenticated has been answered. */
export function registerConsoleAudit(app: FastifyInstance, events: EventService): void {
  // a callback hook, not an async one: it runs on every response, and a promise per response costs
  app.addHook('onResponse', (request, reply, done) => {
    const s = consoleSessionOf(request);
    if (s && audited(request)) {
      const path = request.url.split('?')[0]!;
      const upgrade = request.headers.upgrade !== undefined ? ' (WebSocket)' : '';
      auditConsoleAction(events, s.principal, s.record, 'console.action', `${request.method} ${path}${upgrade}`, reply.statusCode);
    }
    done();
  });
}

function audited(request: FastifyRequest): boolean {
  if (request.headers.upgrade !== undefined) return true;
  if (!isStateChanging(request)) return false;
  return request.routeOptions.url === '/graphql' ? isGraphqlMutation(request.body) : true;
}

/** whether a GraphQL POST body (one operation or a batch) runs a mutation; unreadable ones run nothing */
export function isGraphqlMutation(body: unknown): boolean {
  if (Array.isArray(body)) return body.some(isGraphqlMutation);
  const b = body as { query?: unknown; operationName?: unknown } | null | undefined;
  if (typeof b?.query !== 'string') return false;
  try {
    const name = typeof b.operationName === 'string' ? b.operationName : undefined;
    return getOperationAST(parse(b.query), name)?.operation === 'mutation';
  } catch {
    return false;
  }
}
