// The control plane's metrics, one prom-client Registry per control plane (tests run several in one
// process), served by GET /metrics. Names and labels are an interface: docs/metrics.md lists them, and
// a metric is added there when it is added here. Lower layers never import prom-client: the store,
// the SSH pool and the provisioner each take a small observer interface, implemented below.
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { SshObserver } from '../../../fleet/index.ts';
import type { StoreObserver, StoreReader } from '../../../store/index.ts';
import { registerFleetGauges } from './fleet-gauges.ts';
import { GpuUtilization, type GpuSample } from './gpu-utilization.ts';
import { scrapeGauge } from './scrape-gauge.ts';
import { HttpRequestMetrics } from './http-request-metrics.ts';

/**
 * process_* and nodejs_* of prom-client, collected once per process: collectDefaultMetrics starts an
 * event-loop-delay monitor and a GC observer that are never stopped, so one per control plane would pile
 * them up in a process that starts many (an embedder, the test suite). Each Telemetry registers these same
 * metric objects in its own registry, so its /metrics reads exactly as with its own collection.
 */
let processRegistry: Registry | null = null;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** the `route` label of a request no route matched (the raw URL would be unbounded) */
export const UNMATCHED_ROUTE = 'unmatched';

export interface HttpObservation {
  method: string;
  /** the matched route's pattern (`/v2/pods/:id`), or UNMATCHED_ROUTE */
  route: string;
  status: number;
  seconds: number;
}

/** What the provisioner tells about its work (provisioner/ codes against this shape). */
export interface ProvisionerObserver {
  /** one reconcile pass of one host took `seconds` */
  reconciled(hostId: string, seconds: number): void;
  /** the host's GPUs as nvidia-smi last sampled them */
  gpusSampled(hostId: string, gpus: readonly GpuSample[]): void;
}

export interface TelemetryOptions {
  /** a host's GPU sample older than this is no longer exported (its host stopped being sampled) */
  gpuSampleTtlMs?: number;
  /** process_* and nodejs_* metrics of prom-client; default true */
  processMetrics?: boolean;
}

export class Telemetry {
  readonly registry: Registry;
  readonly ssh: SshObserver;
  readonly store: StoreObserver;
  readonly provisioner: ProvisionerObserver;
  private readonly http: HttpRequestMetrics;
  private readonly gpus: GpuUtilization;

  constructor(opts: TelemetryOptions = {}) {
    // a registry of its own that starts with the process's metrics (the same metric objects)
    this.registry = opts.processMetrics ?? true ? Registry.merge([processMetrics()]) : new Registry();
    const registers = [this.registry];
    // gpufleet_http_requests_total and gpufleet_http_request_duration_seconds
    this.http = new HttpRequestMetrics(this.registry, [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120]);
    const reconcile = new Histogram({
      name: 'gpufleet_reconcile_duration_seconds',
      help: 'One reconcile pass of one host: observe its containers and close the gap to the store',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800],
      registers,
    });
    const sshDuration = new Histogram({
      name: 'gpufleet_ssh_command_duration_seconds',
      help: 'One command over SSH, from asking for its channel to its outcome (dial included)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120, 600],
      registers,
    });
    const sshFailures = new Counter({
      name: 'gpufleet_ssh_failures_total',
      help: 'SSH-level failures per host: no connection, host key refused, channel refused, connection lost, timeout, output cap',
      labelNames: ['host'],
      registers,
    });
    const storeCommit = new Histogram({
      name: 'gpufleet_store_commit_duration_seconds',
      help: "A writing transaction's commit: from its writes being applied to their being durable (journal group commit)",
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    this.gpus = new GpuUtilization(this.registry, opts.gpuSampleTtlMs ?? 60_000);
    this.ssh = {
      commandDone: (_hostId, seconds) => sshDuration.observe(seconds),
      failed: (hostId) => sshFailures.inc({ host: hostId }),
    };
    this.store = { committed: (seconds) => storeCommit.observe(seconds) };
    this.provisioner = {
      reconciled: (_hostId, seconds) => reconcile.observe(seconds),
      gpusSampled: (hostId, gpus) => this.gpus.sampled(hostId, gpus),
    };
  }

  /** Exports the gauges read from the store at scrape time (pods, hosts, GPUs). */
  watchFleet(store: StoreReader): void {
    registerFleetGauges(this.registry, store);
    this.gpus.forgetRemovedHosts(store);
  }

  httpRequest(o: HttpObservation): void {
    this.http.record(o.method, o.route, o.status, o.seconds);
  }

  /**
   * A gauge computed at each scrape: `collect` sets its values (the gauge is emptied first, so a label
   * set it no longer sets disappears). For metrics read from state, as the fleet gauges are.
   */
  scrapeGauge<L extends string>(name: string, help: string, labelNames: readonly L[], collect: (set: (labels: Record<L, string>, value: number) => void) => Promise<void> | void): void {
    scrapeGauge(this.registry, name, help, labelNames, collect);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
