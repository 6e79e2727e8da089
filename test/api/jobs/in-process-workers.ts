// Workers for the job side's tests before workers run in containers: the TypeScript worker SDK
// (worker/) started in this process against the control plane's real job-take/job-done/job-stream/
// ping/job-stop routes, with a token from StoreWorkerDirectory. The handler answers the same job
// inputs as the test worker images (docs/worker-sdk.md): {sleep_ms, progress, fail, output, refresh,
// stream, stream_delay_ms}. Also the fixture most job tests start from.
import { startWorker, type Job, type JobContext, type WorkerHandle } from '../../../worker/index.ts';
import { testJobHandler, type TestInput } from '../../harness/worker-handlers/test-job-handler.ts';
import { startTestControlPlane, type TestControlPlane, type TestControlPlaneOptions } from '../../harness/control-plane.ts';
import { StoreWorkerDirectory } from './store-worker-directory.ts';

export type { TestInput };

/** what the handlers saw: job ids started, and the ids whose signal the platform aborted (job-stop) */
export const handlerLog = { started: [] as string[], stopped: [] as string[] };

export function testHandler(job: Job<TestInput>, ctx: JobContext): unknown {
  handlerLog.started.push(job.id);
  ctx.signal.addEventListener('abort', () => handlerLog.stopped.push(job.id), { once: true });
  return testJobHandler(job, ctx);
}

const quiet = { debug: () => undefined, info: () => undefined, error: () => undefined };

export interface InProcessWorker {
  workerId: string;
  token: string;
  handle: WorkerHandle;
}

/** the protocol env a worker container gets (runpod-compat.md 3.1), pointing at `origin` */
export function workerEnv(origin: string, endpointId: string, workerId: string, token: string, pingMs = 1000): Record<string, string> {
  const base = `${origin}/v2/${endpointId}`;
  return {
    RUNPOD_WEBHOOK_GET_JOB: `${base}/job-take/$ID?gpu=test`,
    RUNPOD_WEBHOOK_POST_OUTPUT: `${base}/job-done/$RUNPOD_POD_ID/$ID?gpu=test`,
    RUNPOD_WEBHOOK_POST_STREAM: `${base}/job-stream/$RUNPOD_POD_ID/$ID?gpu=test`,
    RUNPOD_WEBHOOK_PING: `${base}/ping/$RUNPOD_POD_ID?gpu=test`,
    RUNPOD_POD_ID: workerId,
    RUNPOD_ENDPOINT_ID: endpointId,
    RUNPOD_AI_API_KEY: token,
    RUNPOD_PING_INTERVAL: String(pingMs),
  };
}

export async function startInProcessWorker(
  cp: TestControlPlane,
  directory: StoreWorkerDirectory,
  endpointId: string,
  opts: { concurrency?: number; refreshWorker?: boolean; returnAggregateStream?: boolean; pingMs?: number } = {},
): Promise<InProcessWorker> {
  const { workerId, token } = await directory.issue(endpointId);
  const handle = startWorker<TestInput>({
    handler: testHandler,
    concurrency: opts.concurrency ?? 1,
    refreshWorker: opts.refreshWorker ?? false,
    returnAggregateStream: opts.returnAggregateStream ?? false,
    handleSignals: false,
    env: workerEnv(cp.url, endpointId, workerId, token, opts.pingMs),
    logger: quiet,
  });
  return { workerId, token, handle };
}

export interface JobWorld {
  cp: TestControlPlane;
  directory: StoreWorkerDirectory;
  /** an account with credits, its key (read_write) */
  user: { accountId: string; key: string };
  templateId: string;
  /** a new QUEUE endpoint of `user` (or of `key`'s account) */
  newEndpoint(key?: string, extra?: Record<string, unknown>): Promise<string>;
  workers: InProcessWorker[];
  startWorker(endpointId: string, opts?: Parameters<typeof startInProcessWorker>[3]): Promise<InProcessWorker>;
  close(): Promise<void>;
}

/** a control plane with StoreWorkerDirectory registered, an account with credits, a serverless template */
export async function startJobWorld(opts: TestControlPlaneOptions = {}): Promise<JobWorld> {
  const cp = await startTestControlPlane(opts);
  const directory = new StoreWorkerDirectory(cp.services.store);
  cp.services.workerPorts.register(directory);
  const user = await cp.newAccount('read_write', 100);
  const tpl = await cp.api('/v2/templates', { method: 'POST', key: user.key, json: { name: 'job-test', image: 'busybox', serverless: true } });
  if (tpl.status !== 201) throw new Error(`template: ${tpl.status} ${await tpl.text()}`);
  const templateId = ((await tpl.json()) as { id: string }).id;
  const world: JobWorld = {
    cp,
    directory,
    user,
    templateId,
    workers: [],
    async newEndpoint(key = user.key, extra = {}) {
      let tid = templateId;
      if (key !== user.key) {
        const t = await cp.api('/v2/templates', { method: 'POST', key, json: { name: 'job-test', image: 'busybox', serverless: true } });
        tid = ((await t.json()) as { id: string }).id;
      }
      const res = await cp.api('/v1/endpoints', { method: 'POST', key, json: { templateId: tid, gpuTypeIds: ['ADA_24'], ...extra } });
      if (res.status !== 200) throw new Error(`endpoint: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { id: string }).id;
    },
    async startWorker(endpointId, o) {
      const w = await startInProcessWorker(cp, directory, endpointId, o);
      world.workers.push(w);
      return w;
    },
    async close() {
      await Promise.all(world.workers.map((w) => w.handle.stop()));
      await cp.close();
    },
  };
  return world;
}

/** polls `fn` until it returns something truthy (or throws after `ms`) */
export async function eventually<T>(fn: () => Promise<T | undefined | null | false>, ms = 10_000, what = 'condition'): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
