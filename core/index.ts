// The public surface of core/: what other layers import, by name. core/ is a folder per domain, each
// with its own index.ts; the wiring (services.ts, config.ts, store-wiring.ts, readiness.ts) stays here at
// the root, and no domain imports it. The map and the order between domains: docs/architecture.md.
export { ApiKeys, hasScope, keyView, CONSOLE_SESSION_TTL_MS, ConsoleSessions, csrfTokenMatches, type ConsoleSession } from './accounts/index.ts';
export {
  AccountCredits,
  accruePod,
  type BillingKind,
  billingQueryFromParams,
  BillingService,
  costMicros,
  spendable,
} from './billing/index.ts';
export {
  createEndpointV2,
  endpointRequestUrls,
  type EndpointSaveOptions,
  EndpointService,
  endpointV2Containers,
  type RequestUrls,
  TemplateService,
  toEndpointV2View,
  toEndpointView,
  toTemplateView,
  updateEndpointV2,
} from './endpoints/index.ts';
export { type HeldRequestKind, HeldRequests } from './fair-share/index.ts';
export { CUDA_VERSION, type GpuTypeInfo, HostService, parseSshAddress } from './hosts/index.ts';
export { GpuHealthSignal, type GpuHealthListener, type GpuHealthSignalEvent, type DiagnoseInput, type DiagnoseResult, GpuDiagnostics } from './hosts/index.ts';
export { GpuUsageHistory, usageOf } from './hosts/index.ts';
export { AccountLimitsService, type AccountLimitsView, quotaUsage } from './quotas/index.ts';
export { pullRefusal, refusedRegistriesInUse, RegistryService, systemLookup } from './images/index.ts';
export {
  EmbeddedJobQueue,
  type JobQueue,
  JobService,
  JobTable,
  MAX_TAKE_BATCH,
  parseStatusTtl,
  parseWait,
  type PingReport,
  PostgresJobQueue,
  type WebhookDelivery,
  WebhookSender,
  type WorkerCountsSource,
  type WorkerDirectory,
  type WorkerHealthReport,
  type WorkerIdentity,
  WorkerProtocol,
  type WorkerStateCounts,
} from './jobs/index.ts';
export {
  EVENT_LIST_MAX_LIMIT,
  type EventQuery,
  EventService,
  type MetricsWindow,
  parseMetricsWindow,
  type ProvisionerObserver,
  windowView,
  Telemetry,
  UNMATCHED_ROUTE,
} from './observability/index.ts';
export {
  AsyncQueue,
  type ContainerExec,
  type ContainerExecRequest,
  type ContainerExecRunner,
  type ContainerLogLine,
  type ContainerLogRequest,
  type ContainerLogSource,
  type ContainerSession,
  type ContainerSessionRequest,
  type ContainerSessionRunner,
  type ExecChunk,
  type ExecSession,
  type ExecSessionPlan,
  type ExecSessionQuery,
  parsePodLogQuery,
  type PodCreateOptions,
  PodExecService,
  type PodListFilter,
  type PodLogQuery,
  PodLogService,
  type PodLogStream,
  PodService,
  moveBlocker,
  type MoveOrder,
  type MoveOutcome,
  onHostToMove,
  PodMover,
  PodTimerLoop,
  type PodTimers,
  parseTimer,
  rfc3339Nanos,
  type SessionOutput,
} from './pods/index.ts';
export {
  canonicalMime,
  imagePixels,
  kindOf,
  LocalMediaStore,
  MEDIA_URL_LIFETIME_MS,
  MediaService,
  type MediaStore,
  PublicEndpointCatalog,
  resolveRange,
  type S3MediaConfig,
  S3MediaStore,
  sniffMime,
  wavSeconds,
} from './public-models/index.ts';
export { type HostLeases, SharedHostLeases } from './replicas/index.ts';
export { StackLockService } from './stacks/index.ts';
export { NetworkVolumeService, toNetworkVolumeView } from './volumes/index.ts';
export { Autoscaler, EndpointHistory, inService, type MetricsBucket, type RelayConnectionHandler, WorkerRelayDoor, WorkerService } from './workers/index.ts';
export {
  AccountSshKeys,
  checkPubKey,
  cookieValue,
  isGpufleetCookie,
  parseProxyHost,
  linkPath,
  PORT_LINK_KEY_PURPOSE,
  PORT_LINK_PARAM,
  PortAccess,
  PortTokens,
  pubKeyFromList,
  sshKeyList,
  underProxyDomain,
} from './connect/index.ts';
export { configFromEnv, configWarnings, parseSecretKey, type ServerConfig, workerOrigin, workerRelayPortWarning, workerRelayWanted } from './config.ts';
export { closeServices, createServices, createTelemetry, type Services } from './services.ts';
export { openStore, sharedDatabase } from './store-wiring.ts';
