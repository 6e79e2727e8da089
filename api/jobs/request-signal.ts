// An AbortSignal that fires when the caller of a long poll goes away before its answer: the queue
// then stops waiting for it (and a job-take puts back a job it had handed out meanwhile).
import type { FastifyReply } from 'fastify';

export function callerGone(reply: FastifyReply): AbortSignal {
  return abortOnCallerGone(reply).signal;
}

/** the controller behind `callerGone`, for a callee that may also abort the wait itself (job-take) */
export function abortOnCallerGone(reply: FastifyReply): AbortController {
  const ac = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) ac.abort();
  });
  return ac;
}

/** a route param as the router matched it */
export function param(params: unknown, name: string): string {
  const v = (params as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : '';
}
