// core/jobs: the durable job queue of serverless queue endpoints (embedded: its records in a RecordLog
// of store/, job-log.ts; PostgreSQL: its rows behind the store's JobRows port, store/pg/jobs/), the job and worker-protocol services, webhook
// delivery (webhook.ts, the one outbound HTTP call here), and the port it declares for reaching workers
// (worker-ports.ts). The job record is model's (model/records/job.ts). No routes here (api/jobs/ serves
// them). JobTable is exported for bench/. See docs/jobs.md.
export { EmbeddedJobQueue } from './embedded-queue.ts';
export { type CompleteRequest, type JobQueue, type QueueDepth, type RecycleEvent } from './job-queue.ts';
export { JobService, parseStatusTtl, parseWait } from './job-service.ts';
export { PostgresJobQueue } from './postgres-queue.ts';
export { type EmbeddedJobQueueOptions } from './queue-options.ts';
export { type WebhookDelivery, WebhookSender } from './webhook.ts';
export {
  noWorkerCounts,
  type WorkerCountsSource,
  type WorkerDirectory,
  type WorkerHealthReport,
  type WorkerIdentity,
  WorkerPorts,
  type WorkerStateCounts,
} from './worker-ports.ts';
export { MAX_TAKE_BATCH, type PingReport, WorkerProtocol } from './worker-protocol.ts';
export { JobTable } from './job-table.ts';
