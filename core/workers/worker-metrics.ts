// Metrics of serverless queue endpoints (docs/metrics.md, "Jobs and workers"). What is (jobs queued
// and running, workers by state) is read at each scrape; what happened (jobs finished, how long they
// ran) is counted from the queue's onFinal. The `endpoint` label is the endpoint's id: series exist
// only for endpoints the store holds, so a deleted endpoint's series go at the next scrape and the
// number of series follows the number of endpoints, never the number of jobs.
import { Counter, Histogram, type Registry } from 'prom-client';
import type { StoreReader } from '../../store/index.ts';
import type { JobQueue } from '../jobs/index.ts';
import type { WorkerCountsSource, WorkerStateCounts } from '../jobs/index.ts';
import { scrapeGauge } from '../observability/index.ts';
import type { FinalStatus, Job } from '../../model/index.ts';

const FINAL_STATUSES = ['COMPLETED', 'FAILED', 'CANCELLED', 'TIMED_OUT'] as const satisfies readonly FinalStatus[];
/** `ready` is idle + running, so it is left out: the states of gpufleet_workers add up */
const WORKER_STATES = ['idle', 'initializing', 'running', 'unhealthy', 'throttled'] as const satisfies readonly (keyof WorkerStateCounts)[];

export interface ServerlessMetricsDeps {
  store: StoreReader;
  queue: Pick<JobQueue, 'counts' | 'onFinal'>;
  workers: WorkerCountsSource;
}

/** Registers gpufleet_jobs, gpufleet_jobs_finished_total, gpufleet_job_duration_seconds and gpufleet_workers; returns the onFinal unsubscribe. */
export function registerServerlessMetrics(registry: Registry, d: ServerlessMetricsDeps): () => void {
  const endpointIds = async (): Promise<string[]> => (await d.store.list('endpoints')).map((e) => e.id);

  scrapeGauge(registry, 'gpufleet_jobs', 'Jobs the queue holds now, per endpoint: IN_QUEUE and IN_PROGRESS', ['endpoint', 'status'], async (set) => {
    for (const endpoint of await endpointIds()) {
      const c = await d.queue.counts(endpoint);
      set({ endpoint, status: 'IN_QUEUE' }, c.inQueue);
      set({ endpoint, status: 'IN_PROGRESS' }, c.inProgress);
    }
  });

  scrapeGauge(registry, 'gpufleet_workers', 'Serverless workers per endpoint by state (idle, initializing, running, unhealthy, throttled)', ['endpoint', 'state'], async (set) => {
    for (const endpoint of await endpointIds()) {
      const c = await d.workers.counts(endpoint);
      for (const state of WORKER_STATES) set({ endpoint, state }, c[state]);
    }
  });

  // endpoints with series in the two instruments below; pruned at scrape time against the store
  const seen = new Set<string>();
  const prune = async (): Promise<Set<string>> => {
    const live = new Set(await endpointIds());
    for (const endpoint of [...seen]) {
      if (live.has(endpoint)) continue;
      seen.delete(endpoint);
      for (const status of FINAL_STATUSES) {
        finished.remove({ endpoint, status });
        duration.remove({ endpoint, status });
      }
    }
    return live;
  };
  const finished = new Counter<'endpoint' | 'status'>({
    name: 'gpufleet_jobs_finished_total',
    help: 'Jobs that reached a final status (COMPLETED, FAILED, CANCELLED, TIMED_OUT) since this control plane started, per endpoint',
    labelNames: ['endpoint', 'status'],
    registers: [registry],
    // every existing endpoint shows all four statuses, at 0 until one finishes (a rate needs the 0)
    async collect() {
      for (const endpoint of await prune()) {
        seen.add(endpoint);
        for (const status of FINAL_STATUSES) this.inc({ endpoint, status }, 0);
      }
    },
  });
  const duration = new Histogram<'endpoint' | 'status'>({
    name: 'gpufleet_job_duration_seconds',
    help: 'executionTime of final jobs that a worker ran (from the take to the final status), per endpoint and final status',
    labelNames: ['endpoint', 'status'],
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
    registers: [registry],
    async collect() {
      await prune();
    },
  });

  return d.queue.onFinal((job: Job) => {
    const labels = { endpoint: job.endpointId, status: job.status };
    seen.add(job.endpointId);
    finished.inc(labels);
    if (job.executionTime !== undefined) duration.observe(labels, job.executionTime / 1000);
  });
}
