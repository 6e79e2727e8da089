// The durable job queue of serverless queue endpoints: the port (JobQueue) and its embedded
// implementation. No HTTP here; the job and worker routes call this. See docs/jobs.md.
export type { EnqueueRequest, FinalStatus, Job, JobPolicy, JobStatus, Retention } from './job.ts';
export { JOB_LIMITS, JOB_STATUSES, isFinal } from './job.ts';
export type {
  CompleteRequest, CompletedCursor, DeleteEndpointResult, EndpointCounts, HeartbeatResult, JobQueue, PendingWebhook, QueueDepth, RecycleEvent, StreamRead, TakeOptions, WaitOptions,
} from './job-queue.ts';
export { EmbeddedJobQueue } from './embedded-queue.ts';
export { DEFAULT_LEASE_MS, type EmbeddedJobQueueOptions } from './queue-options.ts';
export { PostgresJobQueue, type PostgresJobQueueOptions } from './postgres-queue.ts';
export type { Repair } from './log-replay.ts';
export { JobService, toJobView, parseWait, parseStatusTtl, JOB_WAIT, STREAM_HOLD_MS, type JobView, type StreamView, type HealthView, type JobServiceOptions } from './job-service.ts';
export { WorkerProtocol, WORKER_POLL_MS, MAX_TAKE_BATCH, type TakenJob, type PingReport, type WorkerProtocolOptions } from './worker-protocol.ts';
export { WorkerPorts } from './worker-ports.ts';
export { WebhookSender, checkWebhookUrl, WEBHOOK_RETRIES, WEBHOOK_RETRY_DELAY_MS, type WebhookDelivery } from './webhook.ts';
