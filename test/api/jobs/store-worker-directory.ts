// A WorkerDirectory for the job side's tests, until the worker side's directory runs real workers in
// containers: a real implementation of the port (core/workers/worker-directory.ts) over the
// control plane's store, not a mock of HTTP. `issue()` makes a worker of an endpoint with its own
// token (the endpoint must exist in the store, and a token dies with its endpoint); what the worker
// protocol tells it (seen, recycle) is kept for the tests to read, and it counts workers by state.
import { createHash, randomBytes } from 'node:crypto';
import type { Store } from '../../../store/index.ts';
import type { WorkerCountsSource, WorkerDirectory, WorkerHealthReport, WorkerIdentity, WorkerStateCounts } from '../../../core/index.ts';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

interface TestWorker extends WorkerIdentity {
  state: 'initializing' | 'idle' | 'running' | 'unhealthy' | 'retired';
}

export class StoreWorkerDirectory implements WorkerDirectory, WorkerCountsSource {
  readonly seenReports: { workerId: string; report: WorkerHealthReport }[] = [];
  readonly recycled: { workerId: string; reason: string; fault: boolean }[] = [];
  private readonly byTokenHash = new Map<string, TestWorker>();
  private readonly byId = new Map<string, TestWorker>();
  private n = 0;

  constructor(private readonly store: Store) {}

  /** a new worker of `endpointId` (which must exist) and its token */
  async issue(endpointId: string): Promise<{ workerId: string; token: string }> {
    const e = await this.store.get('endpoints', endpointId);
    if (!e) throw new Error(`no endpoint ${endpointId} in the store`);
    const workerId = `w${++this.n}-${randomBytes(4).toString('hex')}`;
    const token = `wt_${randomBytes(24).toString('base64url')}`;
    const w: TestWorker = { workerId, endpointId, accountId: e.accountId, state: 'initializing' };
    this.byTokenHash.set(sha(token), w);
    this.byId.set(workerId, w);
    return { workerId, token };
  }

  async authenticate(token: string): Promise<WorkerIdentity | null> {
    const w = this.byTokenHash.get(sha(token));
    if (!w || w.state === 'retired') return null;
    // a token dies with its endpoint
    if (!(await this.store.get('endpoints', w.endpointId))) return null;
    return { workerId: w.workerId, endpointId: w.endpointId, accountId: w.accountId };
  }

  async seen(workerId: string, report: WorkerHealthReport): Promise<void> {
    this.seenReports.push({ workerId, report });
    const w = this.byId.get(workerId);
    if (!w || w.state === 'retired') return;
    w.state = !report.healthy ? 'unhealthy' : report.inProgress.length > 0 ? 'running' : 'idle';
  }

  async recycle(workerId: string, reason: string, opts: { fault?: boolean } = {}): Promise<void> {
    this.recycled.push({ workerId, reason, fault: opts.fault ?? false });
    const w = this.byId.get(workerId);
    if (w) w.state = 'retired';
  }

  async counts(endpointId: string): Promise<WorkerStateCounts> {
    const c: WorkerStateCounts = { idle: 0, initializing: 0, ready: 0, running: 0, throttled: 0, unhealthy: 0 };
    for (const w of this.byId.values()) {
      if (w.endpointId !== endpointId || w.state === 'retired') continue;
      c[w.state]++;
    }
    c.ready = c.idle + c.running;
    return c;
  }
}
