// Where the worker side plugs in: the job and worker-protocol services call WorkerDirectory (and,
// when given, WorkerCountsSource) through this slot. Until something is registered no worker token
// authenticates, so every worker protocol call is 401, and health counts no workers.
import type { WorkerDirectory, WorkerHealthReport, WorkerIdentity } from '../serverless/worker-directory.ts';
import { noWorkerCounts, type WorkerCountsSource, type WorkerStateCounts } from '../serverless/worker-counts.ts';

function hasCounts(x: object): x is WorkerCountsSource {
  return typeof (x as Partial<WorkerCountsSource>).counts === 'function';
}

export class WorkerPorts implements WorkerDirectory, WorkerCountsSource {
  private directory: WorkerDirectory | null = null;
  private counter: WorkerCountsSource | null = null;

  /**
   * The worker side's directory (and counts; taken from the directory itself when it has a
   * `counts` method). Replaces what was registered before; the returned function unregisters.
   */
  register(directory: WorkerDirectory, counts?: WorkerCountsSource): () => void {
    const c = counts ?? (hasCounts(directory) ? directory : null);
    this.directory = directory;
    this.counter = c;
    return () => {
      if (this.directory === directory) {
        this.directory = null;
        this.counter = null;
      }
    };
  }

  get registered(): boolean {
    return this.directory !== null;
  }

  authenticate(token: string): Promise<WorkerIdentity | null> {
    return this.directory ? this.directory.authenticate(token) : Promise.resolve(null);
  }

  seen(workerId: string, report: WorkerHealthReport): Promise<void> {
    return this.directory ? this.directory.seen(workerId, report) : Promise.resolve();
  }

  recycle(workerId: string, reason: string, opts?: { fault?: boolean }): Promise<void> {
    return this.directory ? this.directory.recycle(workerId, reason, opts) : Promise.resolve();
  }

  notifyQueued(endpointId: string): void {
    this.directory?.notifyQueued?.(endpointId);
  }

  counts(endpointId: string): Promise<WorkerStateCounts> {
    return this.counter ? this.counter.counts(endpointId) : Promise.resolve(noWorkerCounts());
  }
}
