// An optional second port beside WorkerDirectory (worker-directory.ts): how many workers of an
// endpoint are in each state, for `GET /v2/{endpointId}/health` `workers`. The worker side
// implements it when it can (WorkerService.counts has this shape); without it health reports zeros.
// Kept apart from WorkerDirectory so that port stays as agreed.

/** health `workers`: the public platform's names plus `unhealthy` */
export interface WorkerStateCounts {
  idle: number;
  initializing: number;
  ready: number;
  running: number;
  throttled: number;
  unhealthy: number;
}

export interface WorkerCountsSource {
  counts(endpointId: string): Promise<WorkerStateCounts>;
}

export function noWorkerCounts(): WorkerStateCounts {
  return { idle: 0, initializing: 0, ready: 0, running: 0, throttled: 0, unhealthy: 0 };
}
