// The worker side without hosts or HTTP: the control plane's services over a store in a temp dir, a
// real job queue beside it, and a WorkerService + Autoscaler that share one clock the test moves by
// hand (starting at the real time, so record timestamps stay plausible). Host records are written
// straight into the store (fake-hosts.ts); what the provisioner would observe, the test writes.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { accruePod, createServices, type Services } from '../../../core/index.ts';
import { Autoscaler } from '../../../core/workers/autoscaler-loop.ts';
import { WorkerService, type WorkerServiceOptions } from '../../../core/workers/worker-service.ts';
import { EmbeddedJobQueue, WorkerPorts, WorkerProtocol } from '../../../core/jobs/index.ts';
import type { EndpointRecord, PodRecord, WorkerPod } from '../../../model/index.ts';
import { isWorker, parseQuotas } from '../../../model/index.ts';
import { seedHosts, type FakeHostSpec } from '../../harness/fake-hosts.ts';
import type { Principal } from '../../../model/index.ts';

export const ORIGIN = 'http://cp.test:8080';

export interface WorkerFixture {
  services: Services;
  queue: EmbeddedJobQueue;
  workers: WorkerService;
  scaler: Autoscaler;
  principal: Principal;
  now(): number;
  advance(ms: number): void;
  /** a template (image `img`) and a QUEUE endpoint on it for the fixture's account */
  endpoint(more?: Record<string, unknown>): Promise<EndpointRecord>;
  enqueue(endpointId: string, n?: number): Promise<string[]>;
  /** the endpoint's worker records in service, oldest first */
  live(endpointId: string): Promise<WorkerPod[]>;
  all(endpointId: string): Promise<WorkerPod[]>;
  /** what the provisioner writes once the container runs */
  markRunning(workerId: string): Promise<void>;
  /** what the provisioner writes when the container exits on its own */
  markCrashed(workerId: string, reason?: string): Promise<void>;
  close(): Promise<void>;
}

export async function openWorkerFixture(opts: { hosts?: FakeHostSpec[]; workers?: WorkerServiceOptions } = {}): Promise<WorkerFixture> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-workers-'));
  const services = await createServices({
    port: 8080,
    host: '127.0.0.1',
    dataDir,
    bootstrapKey: undefined,
    rateLimits: parseQuotas(undefined),
    provisioner: false,
    reconcileIntervalMs: 1000,
    metricsIntervalMs: 10_000,
    logLevel: 'silent',
  });
  let t = Date.now();
  const clock = () => t;
  const queue = await EmbeddedJobQueue.open({ dir: path.join(dataDir, 'fixture-jobs'), clock, sweepIntervalMs: 0, fsync: false });
  const workers = new WorkerService(
    { store: services.store, placer: services.placer, secretBox: services.secretBox, origin: () => ORIGIN, queue, admission: services.admission },
    { clock, ...opts.workers },
  );
  const scaler = new Autoscaler(workers, services.store, queue);
  // the job side over the fixture's queue, as services.ts wires it: a job past its executionTimeout
  // reaches the WorkerService through the protocol's recycle()
  const ports = new WorkerPorts();
  ports.register(workers);
  const protocol = new WorkerProtocol(queue, services.store, ports, { clock });
  await seedHosts(services.store, opts.hosts ?? [{ id: 'host-a', gpus: 2 }]);
  const account = await services.keys.createAccount({ email: `w-${Date.now()}@test.local`, balance: 100 });
  const principal: Principal = { accountId: account.id, keyId: 'test', scope: 'read_write', operator: false };
  let n = 0;
  const store = services.store;

  const all = async (endpointId: string) => (await store.list('pods', { endpointId })).filter(isWorker).sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
  // as the provisioner writes what it observed: billing follows (provisioner/pod-status.ts)
  const write = (id: string, patch: (p: PodRecord) => Partial<PodRecord>) =>
    store.transact(async (tx) => {
      const p = await tx.get('pods', id);
      if (!p) return;
      const next = { ...p, ...patch(p) };
      tx.put('pods', next);
      await accruePod(tx, p, next, new Date(t).toISOString());
    });

  return {
    services,
    queue,
    workers,
    scaler,
    principal,
    now: clock,
    advance(ms) {
      t += ms;
    },
    async endpoint(more = {}) {
      const tpl = await services.templates.create(principal, { name: `tpl-${++n}`, image: 'img', disk: 1, env: { FROM_TEMPLATE: 't', SHARED: 'template' } });
      return services.endpoints.create(principal, { templateId: tpl.id, name: `ep-${n}`, gpuTypeIds: ['NVIDIA H100 80GB HBM3'], env: { SHARED: 'endpoint' }, ...more });
    },
    async enqueue(endpointId, count = 1) {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) ids.push((await queue.enqueue({ endpointId, accountId: principal.accountId, input: { i }, sync: false })).id);
      return ids;
    },
    all,
    async live(endpointId) {
      return (await all(endpointId)).filter((p) => p.desiredStatus === 'RUNNING' && p.worker.retiredReason === null);
    },
    markRunning: (id) => write(id, () => ({ status: 'RUNNING', statusReason: null, startedAt: new Date(t).toISOString() })),
    markCrashed: (id, reason = 'container crashed on start (exit code 3)') =>
      write(id, () => ({ status: 'ERROR', desiredStatus: 'EXITED', allocated: false, gpuUuids: [], statusReason: reason })),
    async close() {
      protocol.close();
      workers.close();
      await queue.close();
      await services.store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
