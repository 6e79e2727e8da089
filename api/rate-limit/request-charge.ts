// The units each request is charged, remembered per request: the request guard charges one unit when
// a request arrives; the GraphQL route raises that to one unit per top-level field once it has read
// the document, or gives everything back when the windows cannot take the total (a refused request
// is not counted).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GpufleetError } from '../../model/index.ts';
import { rateLimitHeaders } from './headers.ts';
import { rateLimitError, type Charge, type ConsumeResult, type RequestLimiter } from './limiter.ts';

interface RequestCharge {
  limiter: RequestLimiter;
  subject: string;
  charges: Charge[];
}

const charged = new WeakMap<FastifyRequest, RequestCharge>();

/**
 * One unit for the request, the headers on the reply; 429 (nothing counted) when a window is spent.
 * No promise where the limiter answers at once (this process's counters): the guard runs on every
 * request, and a promise hop per request costs.
 */
export function chargeArrival(request: FastifyRequest, reply: FastifyReply, limiter: RequestLimiter, subject: string): Promise<void> | undefined {
  const result = limiter.consume(subject);
  if (result instanceof Promise) return result.then((r) => arrived(request, reply, limiter, subject, r));
  arrived(request, reply, limiter, subject, result);
  return undefined;
}

function arrived(request: FastifyRequest, reply: FastifyReply, limiter: RequestLimiter, subject: string, { windows, exceeded, charge }: ConsumeResult): void {
  const headers = rateLimitHeaders(windows);
  reply.header('ratelimit-policy', headers['ratelimit-policy']).header('ratelimit', headers.ratelimit);
  if (!charge) throw rateLimitError(exceeded, headers);
  charged.set(request, { limiter, subject, charges: [charge] });
}

/**
 * Brings what the request is charged up to `total` units and says so in the headers. When the windows
 * cannot take the rest, the units already counted are given back and the answer is 429.
 */
export async function chargeTotal(request: FastifyRequest, reply: FastifyReply, total: number): Promise<void> {
  const rc = charged.get(request);
  // the guard charges every request before its handler runs; a handler without a charge is a bug
  if (!rc) throw new GpufleetError('INTERNAL', 'The request was not counted against the rate limit.');
  const extra = total - rc.charges.reduce((n, c) => n + c.units, 0);
  const { windows, exceeded, charge } = await rc.limiter.consume(rc.subject, Date.now(), Math.max(0, extra));
  if (charge) {
    rc.charges.push(charge);
    reply.headers(rateLimitHeaders(windows, total));
    return;
  }
  for (const c of rc.charges) await rc.limiter.refund(c);
  rc.charges = [];
  // the windows as they stand after the refund (a charge of nothing counts nothing)
  const headers = rateLimitHeaders((await rc.limiter.consume(rc.subject, Date.now(), 0)).windows, total);
  throw rateLimitError(exceeded, headers, total);
}
