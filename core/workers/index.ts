// core/workers: serverless workers: records, tokens, liveness, the autoscaler, their metrics; the
// implementation of the job queue's WorkerDirectory port.
export { Autoscaler, type AutoscalerOptions } from './autoscaler-loop.ts';
export { decideScale, type ScaleDecision, type ScaleInput, type ScalerWorker } from './autoscaler.ts';
export { RequestTraffic } from './request-traffic.ts';
export { WORKER_ENV_NAMES, workerContainerEnv } from './worker-env.ts';
export { type RelayConnectionHandler, WorkerRelayDoor } from './worker-relay-door.ts';
export { registerServerlessMetrics } from './worker-metrics.ts';
export { EndpointHistory, type MetricsBucket } from './endpoint-history.ts';
export {
  type EndpointWorkerStatus,
  inService,
  retired,
  WorkerService,
  type WorkerServiceOptions,
} from './worker-service.ts';
export { toWorkerPodView, toWorkerView, type WorkerView } from './worker-view.ts';
