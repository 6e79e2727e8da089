// One long-lived task per host, for the hosts a predicate wants right now (the GPU watch, the worker
// relay): every `syncMs` the wanted set is read again; a host no longer wanted has its task stopped,
// a newly wanted one gets a task started. A task restarts itself after its own failures.
import type { Logger } from 'pino';

export interface HostTask {
  start(): void;
  stop(): Promise<void>;
}

export interface HostTaskLoopOptions<T extends HostTask> {
  /** the hosts that should have a task now */
  wanted(): Promise<Set<string>>;
  make(hostId: string): T;
  syncMs: number;
  /** names the loop in its log line when the wanted set cannot be read */
  what: string;
  logger?: Logger | undefined;
}

export class HostTaskLoop<T extends HostTask> {
  private readonly tasks = new Map<string, T>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private syncing: Promise<void> | null = null;

  constructor(private readonly opts: HostTaskLoopOptions<T>) {}

  /** the task of a host, while it has one */
  task(hostId: string): T | undefined {
    return this.tasks.get(hostId);
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.syncing = this.sync()
        .catch((err: unknown) => this.opts.logger?.warn({ err }, `${this.opts.what}: could not read the hosts`))
        .finally(() => {
          this.syncing = null;
          if (!this.stopped) this.timer = setTimeout(tick, this.opts.syncMs);
        });
    };
    tick();
  }

  async sync(): Promise<void> {
    const wanted = await this.opts.wanted();
    for (const [id, t] of this.tasks) {
      if (wanted.has(id)) continue;
      this.tasks.delete(id);
      await t.stop();
    }
    for (const id of wanted) {
      if (this.tasks.has(id) || this.stopped) continue;
      const t = this.opts.make(id);
      this.tasks.set(id, t);
      t.start();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.syncing;
    await Promise.all([...this.tasks.values()].map((t) => t.stop()));
    this.tasks.clear();
  }
}
