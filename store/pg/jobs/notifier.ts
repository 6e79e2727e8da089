// LISTEN on one connection of the pool, held for the queue's life. When the connection is lost (the
// database restarted, a network cut) it is replaced, with a growing pause, and `onResume` is called
// once listening again: notifications sent in between are lost, so everything parked checks again.
import type pg from 'pg';

export const JOB_CHANNEL = 'gf_jobs';

export class Notifier {
  /** gives the LISTEN connection back (once) */
  private drop: ((err?: Error) => void) | null = null;
  private closed = false;
  private retryMs = 50;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly onMessage: (payload: string) => void,
    private readonly onResume: () => void,
  ) {}

  /** the first LISTEN; a failure here is the caller's (the queue does not open) */
  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (e) {
      await this.close();
      throw e;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const drop = this.drop;
    this.drop = null;
    drop?.();
  }

  private async connect(): Promise<void> {
    const c = await this.pool.connect();
    let given = false;
    const give = (err?: Error): void => {
      if (given) return;
      given = true;
      c.removeListener('notification', onNote);
      c.removeListener('error', onLost);
      c.removeListener('end', onEnd);
      if (this.drop === give) this.drop = null;
      // a connection that failed is destroyed; a healthy one goes back to the pool unlistened
      if (err) c.release(err);
      else void c.query(`UNLISTEN ${JOB_CHANNEL}`).then(() => c.release(), (e: Error) => c.release(e));
    };
    const onLost = (err?: unknown): void => {
      if (given) return;
      give(err instanceof Error ? err : new Error('the LISTEN connection ended'));
      this.reconnectSoon();
    };
    const onEnd = (): void => onLost();
    const onNote = (m: pg.Notification): void => {
      if (m.channel === JOB_CHANNEL && m.payload !== undefined) this.onMessage(m.payload);
    };
    c.on('error', onLost);
    c.on('end', onEnd);
    c.on('notification', onNote);
    try {
      await c.query(`LISTEN ${JOB_CHANNEL}`);
    } catch (e) {
      onLost(e);
      throw e;
    }
    if (this.closed) {
      give();
      return;
    }
    this.drop = give;
    this.retryMs = 50;
  }

  private reconnectSoon(): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.connect().then(
        () => {
          if (!this.closed) this.onResume();
        },
        () => {
          this.retryMs = Math.min(2000, this.retryMs * 2);
          this.reconnectSoon();
        },
      );
    }, this.retryMs);
    this.timer.unref();
  }
}
