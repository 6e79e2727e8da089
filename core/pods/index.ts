// core/pods: pods (create, actions, the container they become), their logs (logs/) and exec (exec/).
export {
  type ContainerExec,
  type ContainerExecRequest,
  type ContainerExecRunner,
  type ContainerSession,
  type ContainerSessionRequest,
  type ContainerSessionRunner,
  type ExecChunk,
  type ExecSession,
  type ExecSessionPlan,
  type ExecSessionQuery,
  PodExecService,
  type SessionOutput,
} from './exec/pod-exec-service.ts';
export { AsyncQueue } from './logs/async-queue.ts';
export { parsePodLogQuery, type PodLogQuery, rfc3339Nanos } from './logs/log-query.ts';
export {
  type ContainerLogLine,
  type ContainerLogRequest,
  type ContainerLogSource,
  PodLogService,
  type PodLogStream,
} from './logs/pod-log-service.ts';
export { type PodCreateOptions, type PodListFilter, PodService, type PodTimers } from './pod-service.ts';
export { moveBlocker, type MoveOrder, type MoveOutcome, onHostToMove, PodMover } from './pod-mover.ts';
export { parseTimer, PodTimerLoop } from './pod-timers.ts';
export { GlobalNetworking } from './global-networking.ts';
