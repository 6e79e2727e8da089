// Readiness of load-balancing workers (runpod-compat.md 3.5): `GET <HEALTH_CHECK_PATH>` (default
// /ping) on PORT_HEALTH (default PORT), through the same connections as requests. 200: ready, in
// rotation; 204: initializing; anything else (or no answer): out of rotation. A 200 is the worker's
// sign of life to the worker side (WorkerService.seen: ready, alive, busy or idle); a worker out of
// rotation for the silence allowance is retired by the autoscaler as a fault, as is one that never
// answers 200 within the init allowance (docs/serverless.md, docs/gateway.md).
import type { Agent } from 'undici';
import type { WorkerService } from '../core/index.ts';
import type { LbWorker, WorkerTable } from './worker-table.ts';
import { workerOrigin } from './worker-dispatcher.ts';

export interface HealthCheckOptions {
  /** ms between checks of a worker; default 1000 */
  intervalMs?: number;
  /** ms a check may take; default 3000 */
  timeoutMs?: number;
}

export class HealthChecks {
  private timer: NodeJS.Timeout | null = null;
  private readonly checking = new Set<string>();
  private readonly readyListeners = new Set<(w: LbWorker) => void>();
  private readonly intervalMs: number;
  private readonly timeoutMs: number;

  constructor(
    private readonly table: WorkerTable,
    private readonly dispatcher: Agent,
    private readonly workers: WorkerService,
    opts: HealthCheckOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 1_000;
    this.timeoutMs = opts.timeoutMs ?? 3_000;
  }

  /** A worker entered rotation. */
  onReady(listener: (w: LbWorker) => void): () => void {
    this.readyListeners.add(listener);
    return () => this.readyListeners.delete(listener);
  }

  start(): void {
    const tick = (): void => {
      for (const w of this.table.all()) if (!this.checking.has(w.id)) void this.check(w);
      this.timer = setTimeout(tick, this.intervalMs);
      this.timer.unref();
    };
    tick();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Checks one worker now (also when a request finds none ready). */
  async check(w: LbWorker): Promise<void> {
    this.checking.add(w.id);
    const what = `GET ${w.healthPath} on port ${w.healthPort}`;
    let status = 0;
    let detail: string;
    try {
      const res = await this.dispatcher.request({
        origin: workerOrigin(w, w.healthPort),
        path: w.healthPath,
        method: 'GET',
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
      status = res.statusCode;
      await res.body.dump();
      detail = status === 200 ? `${what} answered 200` : status === 204 ? `${what} answered 204: initializing` : `${what} answered ${status}: out of rotation`;
    } catch (err) {
      detail = `${what} failed: ${(err as Error).message}`;
    } finally {
      this.checking.delete(w.id);
    }
    if (this.table.worker(w.id) !== w) return; // it left while we asked
    const ready = status === 200;
    const was = w.ready;
    w.ready = ready;
    this.workers.liveness.checked(w.id, ready, detail);
    if (!ready) return;
    await this.workers.seen(w.id, { healthy: true, inProgress: this.workers.requests.serving(w.id) }).catch(() => undefined);
    if (!was) for (const l of this.readyListeners) l(w);
  }
}
