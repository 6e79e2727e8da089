// A test double of the platform's side of the worker protocol (runpod-compat.md 3.2), just enough to
// drive a worker SDK and record every call it makes: a real listening Fastify server with job-take
// (long poll), job-take-batch, job-stop (long poll), job-done, job-stream and ping. It is the SDK's
// counterpart for unit tests, not the control plane.
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import type { AddressInfo } from 'node:net';

export interface RecordedCall {
  at: number;
  /** the path without the query, e.g. /v2/ep1/job-take-batch/w1 */
  path: string;
  workerId: string;
  jobId?: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** JSON-parsed raw body (job-done / job-stream), whatever its content-type */
  body?: unknown;
}

export interface FakePlatformOptions {
  /** '127.0.0.1' (default) or '0.0.0.0' so containers can reach it on the bridge gateway */
  host?: string;
  /** how long job-take / job-stop hold an empty poll before 204 (default 1000 ms) */
  holdMs?: number;
  apiKey?: string;
}

interface Waiter {
  max: number;
  give(jobs: object[]): void;
}

export interface FakePlatform {
  origin: string;
  port: number;
  readonly takes: RecordedCall[];
  readonly dones: RecordedCall[];
  readonly streams: RecordedCall[];
  readonly pings: RecordedCall[];
  readonly stopPolls: RecordedCall[];
  /** answer the next `n` job-take polls with 429 */
  throttleTakes(n: number): void;
  enqueue(job: { id: string; input: unknown; [k: string]: unknown }): void;
  /** the next job-stop poll of any worker returns these ids */
  stopJobs(ids: string[]): void;
  /** the RUNPOD_* environment for a worker polling this server, as gpufleet would set it */
  workerEnv(workerId: string, origin?: string, extra?: Record<string, string>): Record<string, string>;
  /** resolves with the first recorded call matching `pred` (polling the records), or rejects */
  waitFor(list: RecordedCall[], pred: (c: RecordedCall) => boolean, timeoutMs?: number): Promise<RecordedCall>;
  close(): Promise<void>;
}

export async function startFakePlatform(opts: FakePlatformOptions = {}): Promise<FakePlatform> {
  const holdMs = opts.holdMs ?? 1000;
  const apiKey = opts.apiKey ?? 'worker-token-1';
  const queue: object[] = [];
  let waiters: Waiter[] = [];
  let pendingStops: string[] = [];
  let stopWaiters: Array<(ids: string[]) => void> = [];
  let throttle = 0;
  const rec = { takes: [] as RecordedCall[], dones: [] as RecordedCall[], streams: [] as RecordedCall[], pings: [] as RecordedCall[], stopPolls: [] as RecordedCall[] };

  const app = Fastify({ logger: false, forceCloseConnections: true });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

  const record = (req: FastifyRequest, list: RecordedCall[]): RecordedCall => {
    const p = req.params as { worker: string; job?: string };
    const raw = typeof req.body === 'string' && req.body.length > 0 ? (JSON.parse(req.body) as unknown) : undefined;
    const call: RecordedCall = { at: Date.now(), path: req.url.split('?')[0] ?? '', workerId: p.worker, query: req.query as Record<string, string>, headers: req.headers };
    if (p.job !== undefined) call.jobId = p.job;
    if (raw !== undefined) call.body = raw;
    list.push(call);
    return call;
  };
  const authorized = (req: FastifyRequest, reply: FastifyReply): boolean => {
    if (req.headers.authorization === apiKey) return true;
    void reply.code(401).send({ error: 'bad worker token' });
    return false;
  };
  const serve = (): void => {
    while (queue.length && waiters.length) {
      const w = waiters.shift() as Waiter;
      w.give(queue.splice(0, w.max));
    }
  };
  const take = (batch: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const call = record(req, rec.takes);
    if (!authorized(req, reply)) return reply;
    if (throttle > 0) {
      throttle--;
      return reply.code(429).send({ error: 'slow down' });
    }
    const max = batch ? Number(call.query.batch_size ?? '1') : 1;
    const jobs = await new Promise<object[]>((resolve) => {
      const w: Waiter = { max, give: (j) => (clearTimeout(t), resolve(j)) };
      const t = setTimeout(() => ((waiters = waiters.filter((x) => x !== w)), resolve([])), holdMs);
      reply.raw.on('close', () => {
        if (waiters.includes(w)) ((waiters = waiters.filter((x) => x !== w)), clearTimeout(t), resolve([]));
      });
      waiters.push(w);
      serve();
    });
    if (jobs.length === 0) return reply.code(204).send();
    return reply.send(batch ? jobs : jobs[0]);
  };
  app.get('/v2/:ep/job-take/:worker', take(false));
  app.get('/v2/:ep/job-take-batch/:worker', take(true));
  app.get('/v2/:ep/job-stop/:worker', async (req, reply) => {
    record(req, rec.stopPolls);
    if (!authorized(req, reply)) return reply;
    const ids = await new Promise<string[]>((resolve) => {
      if (pendingStops.length) return resolve(pendingStops.splice(0));
      const give = (x: string[]): void => (clearTimeout(t), resolve(x));
      const t = setTimeout(() => ((stopWaiters = stopWaiters.filter((x) => x !== give)), resolve([])), holdMs);
      reply.raw.on('close', () => ((stopWaiters = stopWaiters.filter((x) => x !== give)), clearTimeout(t), resolve([])));
      stopWaiters.push(give);
    });
    if (!ids.length) return reply.code(204).send();
    return reply.send({ jobsToStop: ids });
  });
  app.post('/v2/:ep/job-done/:worker/:job', async (req, reply) => {
    record(req, rec.dones);
    return authorized(req, reply) ? reply.send({}) : reply;
  });
  app.post('/v2/:ep/job-stream/:worker/:job', async (req, reply) => {
    record(req, rec.streams);
    return authorized(req, reply) ? reply.send({}) : reply;
  });
  app.get('/v2/:ep/ping/:worker', async (req, reply) => {
    record(req, rec.pings);
    return reply.send({});
  });

  await app.listen({ host: opts.host ?? '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    port,
    ...rec,
    throttleTakes: (n) => void (throttle = n),
    enqueue(job) {
      queue.push(job);
      serve();
    },
    stopJobs(ids) {
      const w = stopWaiters.shift();
      if (w) w(ids);
      else pendingStops.push(...ids);
    },
    workerEnv(workerId, o = origin, extra = {}) {
      const base = `${o}/v2/ep1`;
      return {
        RUNPOD_POD_ID: workerId,
        RUNPOD_ENDPOINT_ID: 'ep1',
        RUNPOD_AI_API_KEY: apiKey,
        RUNPOD_WEBHOOK_GET_JOB: `${base}/job-take/$ID?gpu=test`,
        RUNPOD_WEBHOOK_POST_OUTPUT: `${base}/job-done/$RUNPOD_POD_ID/$ID?gpu=test`,
        RUNPOD_WEBHOOK_POST_STREAM: `${base}/job-stream/$RUNPOD_POD_ID/$ID?gpu=test`,
        RUNPOD_WEBHOOK_PING: `${base}/ping/$RUNPOD_POD_ID?gpu=test`,
        RUNPOD_PING_INTERVAL: '300',
        RUNPOD_LOG_LEVEL: 'ERROR',
        ...extra,
      };
    },
    async waitFor(list, pred, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = list.find(pred);
        if (hit) return hit;
        if (Date.now() > deadline) throw new Error(`no matching call within ${timeoutMs} ms (${list.length} recorded)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      await app.close();
    },
  };
}
