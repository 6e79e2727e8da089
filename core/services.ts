// Wires the control plane's services over one store. REST, GraphQL and the provisioner share them.
import { loadPriceBook, type PriceBook } from '../fleet/index.ts';
import { DEFAULT_PREEMPT_GRACE_S } from '../model/index.ts';
import type { ServerConfig } from './config.ts';
import { ApiKeys, ConsoleSessions } from './accounts/index.ts';
import type { Store } from '../store/index.ts';
import { FleetPlacer } from './hosts/index.ts';
import { GlobalNetworking, PodMover, PodService } from './pods/index.ts';
import { globalNetworkSettings } from '../model/index.ts';
import { OfferService } from './hosts/index.ts';
import type { SecretBox } from '../store/index.ts';
import { openStore, secretBoxFor, sharedDatabase } from './store-wiring.ts';
import { GpuDiagnostics, GpuHealthSignal, GpuUsageHistory, HostService } from './hosts/index.ts';
import { SshPool } from '../fleet/index.ts';
import { TemplateService } from './endpoints/index.ts';
import { NetworkVolumeService } from './volumes/index.ts';
import { RegistryService } from './images/index.ts';
import { EndpointService } from './endpoints/index.ts';
import { BillingService } from './billing/index.ts';
import { StackLockService } from './stacks/index.ts';
import { proxySettings, workerOrigin } from './config.ts';
import { AccountSshKeys, PORT_LINK_KEY_PURPOSE, PortAccess } from './connect/index.ts';
import { WorkerRelayDoor, WorkerService } from './workers/index.ts';
import path from 'node:path';
import { hostname } from 'node:os';
import { AccountCredits } from './billing/index.ts';
import { EmbeddedJobQueue, PostgresJobQueue, type JobQueue } from './jobs/index.ts';
import { JobService } from './jobs/index.ts';
import { WorkerPorts } from './jobs/index.ts';
import { WorkerProtocol } from './jobs/index.ts';
import { Telemetry } from './observability/index.ts';
import { EndpointHistory, registerServerlessMetrics } from './workers/index.ts';
import { queueReadiness, Readiness, storeReadiness } from './readiness.ts';
import { EventLog } from './observability/index.ts';
import { FileEventArchive } from './observability/index.ts';
import { EventService } from './observability/index.ts';
import { recordStatusEvents } from './observability/index.ts';
import { PodLogService } from './pods/index.ts';
import { PodExecService } from './pods/index.ts';
import { LocalMediaStore, MEDIA_SWEEP_LEAD_MS, MediaService, S3MediaStore } from './public-models/index.ts';
import { HeldRequests, HostStreamShares } from './fair-share/index.ts';
import { publicOrigin } from './public-models/index.ts';
import { PublicEndpointCatalog, PublicEndpointCharges, PublicEndpointOutputs } from './public-models/index.ts';
import { MEDIA_SWEEP_LEADERSHIP, newReplicaId, SharedHostLeases, SoleHostLeases, type HostLeases } from './replicas/index.ts';
import { pinEndpointsOfOthers } from './endpoints/index.ts';
import { AccountLimitsService, Admission, SpendGuard } from './quotas/index.ts';

export interface Services {
  config: ServerConfig;
  store: Store;
  keys: ApiKeys;
  /** web console sessions: API keys exchanged for cookies (docs/console.md, "Sessions and security") */
  consoleSessions: ConsoleSessions;
  pods: PodService;
  /** moves pods off drained, lost or failed hosts keeping their ids (docs/gpu-health.md, "Acting on it") */
  podMover: PodMover;
  placer: FleetPlacer;
  prices: PriceBook;
  offers: OfferService;
  secretBox: SecretBox;
  sshPool: SshPool;
  fleet: HostService;
  templates: TemplateService;
  networkVolumes: NetworkVolumeService;
  registries: RegistryService;
  endpoints: EndpointService;
  billing: BillingService;
  stackLocks: StackLockService;
  /** serverless workers (core/workers): records, tokens, the worker directory; the autoscaler drives it */
  workers: WorkerService;
  /** jobs of serverless queue endpoints, in their own log under <dataDir>/jobs (docs/jobs.md) */
  jobQueue: JobQueue;
  /** workers' calls that came through a host's relay reach the HTTP side here (docs/serverless.md, "Reaching the control plane") */
  workerRelay: WorkerRelayDoor;
  /** the job interface (run, status, …) and the worker protocol over the queue */
  jobs: JobService;
  workerProtocol: WorkerProtocol;
  /** the WorkerDirectory the worker protocol routes call (the worker side registers into it) */
  workerPorts: WorkerPorts;
  credits: AccountCredits;
  /** per-account limits checked where new work is placed (docs/teams.md) */
  admission: Admission;
  /** GET/PATCH /v2/accounts/{id}/limits */
  limits: AccountLimitsService;
  /** stops pods at a balance of 0, announces and enforces monthly budgets (docs/teams.md) */
  spendGuard: SpendGuard;
  /** this control plane's metrics (GET /metrics, docs/metrics.md) */
  telemetry: Telemetry;
  /** what GET /readyz checks: the store, and the provisioner where it runs in this process */
  readiness: Readiness;
  /** serverless endpoints' metrics over time, in this process's memory (GET /v2/serverless/{id}/metrics) */
  endpointHistory: EndpointHistory;
  /** status changes of pods, hosts and workers (docs/events.md) */
  events: EventService;
  /** GET /v2/pods/{id}/logs; the provisioner gives it the container log source */
  podLogs: PodLogService;
  /** POST /v2/pods/{id}/exec; the provisioner gives it the runner */
  podExec: PodExecService;
  /** who may open a pod's HTTP ports on the proxy domain: keys, signed links, their cookies (docs/connect.md) */
  portAccess: PortAccess;
  /** the account's SSH public keys (GraphQL pubKey, REST /v2/account/ssh-keys) */
  sshKeys: AccountSshKeys;
  /** each account's share of a host's log and exec streams (docs/security.md, "Stream shares") */
  streamShares: HostStreamShares;
  /** long-held requests per account: event streams, job waits, logs, exec (the REST routes take them) */
  heldRequests: HeldRequests;
  /** the public model catalog (docs/public-endpoints.md) */
  publicEndpoints: PublicEndpointCatalog;
  /** charges of public model jobs to their callers */
  publicCharges: PublicEndpointCharges;
  /** media outputs and their signed URLs, with the sweeper (docs/media.md) */
  media: MediaService;
  /** this process among the replicas of one database: random per start (docs/replicas.md) */
  replicaId: string;
  /** which hosts this replica reconciles: leases in the database, or every host (embedded store) */
  hostLeases: HostLeases;
  /** GPU health changes as they are committed: the watcher's and the diagnostics' (docs/gpu-health.md, "The signal") */
  gpuHealthSignal: GpuHealthSignal;
  /** POST /v2/hosts/{id}/diagnose and the operator's clear (docs/gpu-health.md, "Returning to service") */
  gpuDiagnostics: GpuDiagnostics;
  /** each GPU's utilisation and memory over time, from this replica's GPU watcher, in memory (GET /v2/hosts/{id}/metrics) */
  gpuUsage: GpuUsageHistory;
}

export interface CreateServicesOptions {
  /** made by the caller when it opens the store itself, so the store reports its commits to it */
  telemetry?: Telemetry;
  /** the clock of media URL expiry and the sweeper (tests move it); default Date.now */
  mediaClock?: () => number;
  /** the clock of quotas, the monthly budget and the spend guard (tests move it across a month); default Date.now */
  quotaClock?: () => number;
  /** the clock of the embedded job queue's deadlines (tests of data directories written earlier set it); default Date.now */
  jobClock?: () => number;
}

/** The metrics registry of one control plane: GPU samples outlive a few sampling intervals, then go stale. */
export function createTelemetry(config: Pick<ServerConfig, 'metricsIntervalMs'>): Telemetry {
  return new Telemetry({ gpuSampleTtlMs: Math.max(30_000, 3 * config.metricsIntervalMs) });
}

export async function createServices(config: ServerConfig, store?: Store, opts: CreateServicesOptions = {}): Promise<Services> {
  const telemetry = opts.telemetry ?? createTelemetry(config);
  // the store: PostgreSQL with GPUFLEET_DATABASE_URL, else the embedded one (core/store-wiring.ts)
  const s = store ?? (await openStore(config, { observer: telemetry.store }));
  const prices = loadPriceBook(config.dataDir);
  const placer = await FleetPlacer.create(s, prices, { preemptGraceSeconds: config.preemptGraceSeconds ?? DEFAULT_PREEMPT_GRACE_S });
  const secretBox = await secretBoxFor(config);
  // throws (the server does not start) when the proxy domain shares a registrable domain with the origin
  const proxy = proxySettings(config);
  const keys = new ApiKeys(s);
  const portAccess = new PortAccess(s, keys, secretBox.deriveKey(PORT_LINK_KEY_PURPOSE), proxy);
  // each account's share of a host's streams is counted beside the pool's own cap per host
  const streamShares = new HostStreamShares(config.streamsPerHost);
  const sshPool = new SshPool({ observer: telemetry.ssh, maxStreamsPerHost: streamShares.perHost });
  const fleet = new HostService(s, sshPool, secretBox, (config.globalNetwork ?? globalNetworkSettings()).range);
  const gpuHealthSignal = new GpuHealthSignal();
  const eventLog = new EventLog();
  // events of earlier runs, kept beside the store (docs/events.md, "Retention")
  await eventLog.useArchive(new FileEventArchive(path.join(config.dataDir, 'events'), eventLog.retention.total));
  await recordStatusEvents(s, eventLog);
  const events = new EventService(s, eventLog);
  telemetry.watchFleet(s);
  const readiness = new Readiness();
  readiness.set('store', storeReadiness(s));
  // replaced by the provisioner's own check once it runs (provisioner/index.ts)
  if (config.provisioner) readiness.set('provisioner', () => 'the provisioner has not started yet');
  const templates = new TemplateService(s, config.allowedRegistries ?? []);
  // records written before template pins: other accounts' endpoints on a public template are pinned
  // to it as it is now, so its owner's next edit does not reach them (core/template-pins.ts)
  await pinEndpointsOfOthers(s);
  // the job queue: with a database (GPUFLEET_DATABASE_URL) the PostgreSQL one, on the store's pool
  // (docs/postgres-queue.md), named as a replica stably across its restarts (host and data directory);
  // otherwise the embedded one, in its own log under <dataDir>/jobs (docs/jobs.md)
  const shared = sharedDatabase(s);
  const jobQueue: JobQueue = shared
    ? await PostgresJobQueue.open(shared.jobRows(), { replicaId: `${hostname()}:${path.resolve(config.dataDir)}` })
    : await EmbeddedJobQueue.open({ dir: path.join(config.dataDir, 'jobs'), ...(opts.jobClock ? { clock: opts.jobClock } : {}) });
  // a queue whose log cannot take writes (a full disk) makes /readyz say so
  readiness.set('jobs', queueReadiness(jobQueue));
  const workerPorts = new WorkerPorts();
  const replicaId = newReplicaId();
  const credits = new AccountCredits(s);
  const quotaClock = opts.quotaClock ?? Date.now;
  const admission = new Admission(quotaClock);
  const media = new MediaService({
    store: config.mediaS3 ? new S3MediaStore(config.mediaS3) : new LocalMediaStore(path.join(config.dataDir, 'media')),
    signingKey: secretBox.deriveKey('media-url-signing/v1'),
    // read when a URL is made: by then the server knows the port it listens on
    origin: () => publicOrigin(services.config),
    ...(opts.mediaClock ? { clock: opts.mediaClock } : {}),
    // a bucket that replicas of one database share is swept by one of them at a time (docs/replicas.md)
    ...(shared && config.mediaS3 ? { sweepLead: shared.leadership(replicaId, MEDIA_SWEEP_LEADERSHIP, MEDIA_SWEEP_LEAD_MS) } : {}),
  });
  const publicEndpoints = new PublicEndpointCatalog(s);
  const publicOutputs = new PublicEndpointOutputs(publicEndpoints, media);
  // the origin is read when a container is built: by then the server knows the port it listens on
  const workers = new WorkerService({ store: s, placer, secretBox, origin: () => workerOrigin(services.config), relayProblem: (hostId) => services.workerRelay.problem(hostId), queue: jobQueue, admission });
  const services: Services = {
    config,
    store: s,
    keys,
    consoleSessions: new ConsoleSessions(s, keys, config.consoleSessionTtlMs),
    pods: new PodService(s, placer, events, config.allowedRegistries ?? [], admission, new GlobalNetworking(config.globalNetwork ?? globalNetworkSettings(), shared !== null)),
    podMover: new PodMover(s, placer),
    placer,
    prices,
    offers: new OfferService(s, placer, prices, config.globalNetwork?.excludedDataCenters ?? []),
    secretBox,
    sshPool,
    fleet,
    templates,
    networkVolumes: new NetworkVolumeService(s, admission),
    registries: new RegistryService(s, secretBox),
    endpoints: new EndpointService(s, templates),
    billing: new BillingService(s),
    stackLocks: new StackLockService(s),
    workers,
    endpointHistory: new EndpointHistory({ endpointIds: async () => (await s.list('endpoints')).map((e) => e.id), queue: jobQueue, workers, store: s }),
    jobQueue,
    workerRelay: new WorkerRelayDoor(),
    jobs: new JobService(jobQueue, s, credits, workerPorts, { webhookAllowPrivate: config.webhookAllowPrivate ?? false, secretBox }),
    workerProtocol: new WorkerProtocol(jobQueue, s, workerPorts, {
      secretBox,
      ...(config.workerPollMs !== undefined ? { pollMs: config.workerPollMs } : {}),
      finishResult: (endpointId, result) => publicOutputs.finish(endpointId, result),
    }),
    workerPorts,
    credits,
    admission,
    limits: new AccountLimitsService(s, quotaClock),
    // its actions reach the pod and worker services when it runs
    spendGuard: new SpendGuard(
      s,
      {
        stopPods: (accountId, reason, nowMs, opts) => services.pods.stopAllOf(accountId, reason, nowMs, opts),
        stopLoadBalancers: (accountId, reason) => services.workers.retireLoadBalancersOf(accountId, reason),
      },
      { clock: quotaClock, ...(config.spendGuardIntervalMs !== undefined ? { intervalMs: config.spendGuardIntervalMs } : {}) },
    ),
    telemetry,
    readiness,
    events,
    podLogs: new PodLogService(s, events, streamShares),
    podExec: new PodExecService(s, events, config.execIdleTimeoutMs, streamShares),
    portAccess,
    sshKeys: new AccountSshKeys(s),
    streamShares,
    heldRequests: new HeldRequests(config.heldRequests),
    publicEndpoints,
    publicCharges: new PublicEndpointCharges(jobQueue, s, publicEndpoints, credits),
    media,
    replicaId,
    hostLeases: shared ? new SharedHostLeases(shared.hostLeaseTable(), replicaId) : new SoleHostLeases(replicaId),
    gpuHealthSignal,
    gpuDiagnostics: new GpuDiagnostics(s, sshPool, fleet, gpuHealthSignal),
    gpuUsage: new GpuUsageHistory(),
  };
  services.spendGuard.start();
  media.start();
  // charges never written (a crash between a job's final record and its charge, a failed write): now, then every minute
  services.publicCharges.start();
  workerPorts.register(services.workers);
  registerServerlessMetrics(telemetry.registry, { store: s, queue: jobQueue, workers: services.workers });
  services.endpointHistory.start();
  // deleting an endpoint cancels its queued and running jobs, then drops their history (spec 4.3)
  services.endpoints.onDeleted(async (e) => {
    await jobQueue.deleteEndpoint(e.id);
    await publicEndpoints.endpointDeleted(e.id);
  });
  return services;
}

/** Stops what the services run beside the store (webhook retries, the job queue); the caller closes the store. */
export async function closeServices(services: Services): Promise<void> {
  await services.endpointHistory.stop();
  await services.spendGuard.stop();
  await services.publicCharges.close();
  await services.media.close();
  services.jobs.close();
  services.workerProtocol.close();
  services.workers.close();
  await services.jobQueue.close();
  await services.events.log.close();
}
