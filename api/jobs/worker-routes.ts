// The worker protocol (runpod-compat.md 3.2), spoken by unmodified runpod-python workers and by
// worker/: job-take, job-take-batch, job-stop, job-done, job-stream, ping. Each route is
// `config: { worker: true }`: the request guard takes the worker's own token (never an API key)
// and checks it belongs to the `:workerId` and `:endpointId` of the route. Bodies are JSON whatever
// the content-type says (runpod-python labels them application/x-www-form-urlencoded).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { emptyAnswerSchema, GpufleetError, jobDoneAnswerSchema, jobsToStopSchema, takenJobSchema, takenJobsSchema } from '../../model/index.ts';
import { MAX_TAKE_BATCH, type PingReport, type WorkerProtocol } from '../../core/index.ts';
import { workerOf } from '../auth/request-guard.ts';
import { errorResponses } from '../rest/route-schema.ts';
import { abortOnCallerGone, callerGone, param } from './request-signal.ts';

const MiB = 1 << 20;
/** a result may be as large as a runsync body */
export const JOB_DONE_BODY_LIMIT = 20 * MiB;
/** one streamed chunk, `{"output": …}` */
export const JOB_STREAM_BODY_LIMIT = 1 * MiB;
/** `reason` of an unhealthy ping is kept to this many characters (runpod-python sends at most 256) */
const REASON_MAX = 500;

const tags = ['worker protocol'];
const workerParams = { type: 'object', properties: { endpointId: { type: 'string' }, workerId: { type: 'string' } } } as const;
const jobParams = { type: 'object', properties: { endpointId: { type: 'string' }, workerId: { type: 'string' }, jobId: { type: 'string' } } } as const;
const config = { worker: true } as const;
const errors = errorResponses(400, 401, 403, 404, 409, 413, 422);
/** a long poll that ended with nothing: no body */
const none = { type: 'null' } as const;

const query = (r: FastifyRequest) => (r.query ?? {}) as Record<string, unknown>;
/** a query value given once, or undefined; given twice is 400 */
function one(q: Record<string, unknown>, name: string): string | undefined {
  const v = q[name];
  if (v === undefined || typeof v === 'string') return v;
  throw new GpufleetError('BAD_REQUEST', `${name} must be given once`, { errors: [`$.${name}: must be given once`] });
}

function batchSize(q: Record<string, unknown>): number {
  const raw = one(q, 'batch_size');
  if (raw === undefined) return 1;
  const n = /^\d{1,6}$/.test(raw) ? Number(raw) : 0;
  if (n < 1) throw new GpufleetError('BAD_REQUEST', 'batch_size must be a positive integer', { errors: ['$.batch_size: must be an integer >= 1'] });
  return Math.min(n, MAX_TAKE_BATCH);
}

/**
 * `job_in_progress=0|1` on job-take (runpod-python: 1 while it tracks any job); absent or any other
 * value: unknown, and ignored (a 400 here would make runpod-python poll again at once, in a loop)
 */
function jobInProgress(q: Record<string, unknown>): boolean | undefined {
  const raw = q.job_in_progress;
  return raw === '1' ? true : raw === '0' ? false : undefined;
}

function pingReport(q: Record<string, unknown>): PingReport {
  if (one(q, 'status') === 'unhealthy') return { healthy: false, check: (one(q, 'check') ?? 'unknown').slice(0, 200), reason: (one(q, 'reason') ?? '').slice(0, REASON_MAX) };
  const raw = q.job_id;
  const parts = raw === undefined ? [] : (Array.isArray(raw) ? raw : [raw]).flatMap((v) => String(v).split(','));
  return { healthy: true, jobIds: parts.map((s) => s.trim()).filter((s) => s.length > 0) };
}

export async function workerRoutes(app: FastifyInstance, protocol: WorkerProtocol): Promise<void> {
  await app.register(async (w) => {
    // whatever the content-type, the body is JSON (runpod-python's quirk); empty is no body
    w.removeAllContentTypeParsers();
    w.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => {
      const text = typeof body === 'string' ? body : body.toString('utf8');
      if (text.trim() === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text) as unknown);
      } catch (e) {
        done(new GpufleetError('INVALID_JSON', `The request body is not valid JSON: ${(e as Error).message}`), undefined);
      }
    });

    const P = '/v2/:endpointId';
    const common = { exposeHeadRoute: false, config } as const;

    const take = (batch: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
      const q = query(request);
      const max = batch ? batchSize(q) : 1;
      const inProgress = jobInProgress(q);
      const jobs = await protocol.take(workerOf(request), { max, abort: abortOnCallerGone(reply), ...(inProgress !== undefined ? { jobInProgress: inProgress } : {}) });
      if (jobs.length === 0) return reply.code(204).send();
      return batch ? jobs : jobs[0];
    };
    w.get(`${P}/job-take/:workerId`, { ...common, schema: { tags, summary: 'Long poll for a job (204 when none came)', params: workerParams, response: { 200: takenJobSchema, 204: none, ...errors } } }, take(false));
    w.get(`${P}/job-take-batch/:workerId`, { ...common, schema: { tags, summary: 'Long poll for up to batch_size jobs (204 when none came)', params: workerParams, response: { 200: takenJobsSchema, 204: none, ...errors } } }, take(true));

    w.get(
      `${P}/job-stop/:workerId`,
      { ...common, schema: { tags, summary: 'Long poll for jobs the worker must stop: {"jobsToStop":[…]}, or 204', params: workerParams, response: { 200: jobsToStopSchema, 204: none, ...errors } } },
      async (request, reply) => {
        const ids = await protocol.stopRequests(workerOf(request), callerGone(reply));
        if (ids.length === 0) return reply.code(204).send();
        return { jobsToStop: ids };
      },
    );

    w.post(
      `${P}/job-done/:workerId/:jobId`,
      { ...common, bodyLimit: JOB_DONE_BODY_LIMIT, schema: { tags, summary: 'A job\'s result; status IN_PROGRESS is a progress update; stopPod recycles the worker', params: jobParams, response: { 200: jobDoneAnswerSchema, ...errors } } },
      async (request) => {
        const job = await protocol.done(workerOf(request), param(request.params, 'jobId'), request.body);
        return { id: job.id, status: job.status };
      },
    );

    w.post(
      `${P}/job-stream/:workerId/:jobId`,
      { ...common, bodyLimit: JOB_STREAM_BODY_LIMIT, schema: { tags, summary: 'One streamed item of a job: {"output": …}', params: jobParams, response: { 200: emptyAnswerSchema, ...errors } } },
      async (request) => {
        await protocol.stream(workerOf(request), param(request.params, 'jobId'), request.body);
        return {};
      },
    );

    w.get(
      `${P}/ping/:workerId`,
      { ...common, schema: { tags, summary: 'Heartbeat with the running job ids (job_id=a,b), or status=unhealthy&check&reason', params: workerParams, response: { 200: emptyAnswerSchema, ...errors } } },
      async (request) => {
        await protocol.ping(workerOf(request), pingReport(query(request)));
        return {};
      },
    );
  });
}
