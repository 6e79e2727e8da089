// A serverless endpoint's metrics slot as one control-plane process recorded it (docs/serverless.md,
// "Metrics over time"): the jobs that became final, the delays, execution times and cold starts in
// the 10-second slot `at`, and the samples of workers and queue taken within it. One record per
// endpoint, slot and writer (a process: replicas and restarts each write their own), kept 24 hours;
// a query sums the writers' slots (core/workers/endpoint-history.ts).

/** a LogHistogram as stored: its non-empty buckets [index, count], count, min and max */
export interface StoredHistogram {
  buckets: [number, number][];
  count: number;
  min: number | null;
  max: number | null;
}

export interface StoredGaugeSample {
  at: number;
  workers: { idle: number; running: number; initializing: number; throttled: number; unhealthy: number };
  inQueue: number;
  inProgress: number;
  /**
   * a load balancer's requests held and in flight as this writer's own gateway saw them (absent: none);
   * a query adds every writer's last value (inQueue/inProgress are the shared job queue's alone)
   */
  requests?: { inQueue: number; inProgress: number };
}

export interface EndpointMetricSlotRecord {
  /** `<endpoint id>.<at>.<writer>` */
  id: string;
  endpointId: string;
  /** the slot's start, ms since the epoch (a multiple of 10 000) */
  at: number;
  /** the hour the slot is in, ms (a query reads the hours of its window) */
  hour: number;
  /** the process that recorded it */
  writer: string;
  jobs: { COMPLETED: number; FAILED: number; CANCELLED: number; TIMED_OUT: number };
  delay: StoredHistogram;
  execution: StoredHistogram;
  coldStart: StoredHistogram;
  /** samples of workers and queue taken in the slot that differed from the one before */
  samples: StoredGaugeSample[];
}
