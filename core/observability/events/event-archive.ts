// Events outlive a restart (docs/events.md, "Retention"): each event is appended as one JSON line to
// <dataDir>/events/events.jsonl, beside the store rather than in it, so the many small events cost
// neither the store's whole-state snapshot nor a second journal write per status change. On start
// the file is read back under the same retention as the memory log; the file itself is rewritten
// with just the retained events once it holds twice as many lines, so it stays bounded.
// Appends are batched and not fsynced: a crash may lose the last few events, never the store's state.
// Private to the data dir's owner (0700/0600), like the rest of it: reasons carry exec argv.
import { mkdir, readFile, rename, writeFile, appendFile } from 'node:fs/promises';
import path from 'node:path';
import type { FleetEvent } from '../../../model/index.ts';

/** Where the events of earlier runs are kept; the memory log (event-log.ts) writes through it. */
export interface EventArchive {
  /** the archived events, oldest first */
  load(): Promise<FleetEvent[]>;
  /** queues an event for writing; `retained` gives the events the log keeps, should the archive compact */
  append(e: FleetEvent, retained: () => readonly FleetEvent[]): void;
  /** writes what is queued */
  close(): Promise<void>;
}

export const EVENTS_FILE = 'events.jsonl';

export class FileEventArchive implements EventArchive {
  private readonly file: string;
  private queued: string[] = [];
  /** the seq of the newest event written */
  private written = 0;
  private queuedSeq = 0;
  private lines = 0;
  private chain: Promise<void> = Promise.resolve();
  private scheduled = false;
  private retained: (() => readonly FleetEvent[]) | null = null;

  /** `total`: the memory log's total retention; the file is compacted past twice that many lines */
  constructor(
    readonly dir: string,
    private readonly total: number,
  ) {
    this.file = path.join(dir, EVENTS_FILE);
  }

  async load(): Promise<FleetEvent[]> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const text = await readFile(this.file, 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return '';
      throw e;
    });
    const out: FleetEvent[] = [];
    for (const line of text.split('\n')) {
      if (!line) continue;
      this.lines++;
      // a line cut by a crash, or one that is not an event: skipped, the rest still loads
      try {
        const e = JSON.parse(line) as FleetEvent;
        if (typeof e.id === 'string' && typeof e.seq === 'number' && typeof e.resourceId === 'string' && typeof e.type === 'string') out.push(e);
      } catch {
        /* skipped */
      }
    }
    // the last line may lack its newline (a crash mid-write): start the next append on a line of its own
    if (text.length > 0 && !text.endsWith('\n')) this.queued.push('');
    return out;
  }

  append(e: FleetEvent, retained: () => readonly FleetEvent[]): void {
    this.queued.push(JSON.stringify(e));
    this.queuedSeq = e.seq;
    this.retained = retained;
    if (this.scheduled) return;
    this.scheduled = true;
    // one write per burst of events (a reconcile pass changes many pods at once)
    setImmediate(() => {
      this.scheduled = false;
      this.chain = this.chain.then(() => this.flush()).catch(() => undefined);
    });
  }

  async close(): Promise<void> {
    this.chain = this.chain.then(() => this.flush()).catch(() => undefined);
    await this.chain;
  }

  private async flush(): Promise<void> {
    if (this.queued.length === 0) return;
    const batch = this.queued;
    const upTo = this.queuedSeq;
    this.queued = [];
    this.lines += batch.filter((l) => l !== '').length;
    await appendFile(this.file, batch.join('\n') + '\n', { mode: 0o600 });
    this.written = upTo;
    // only what is written: events queued meanwhile are appended by the next flush
    if (this.lines > 2 * this.total && this.retained) await this.compact(this.retained().filter((e) => e.seq <= this.written));
  }

  /** rewrites the file with the retained events only (write, then rename: never half a file) */
  private async compact(events: readonly FleetEvent[]): Promise<void> {
    const tmp = `${this.file}.${process.pid}.tmp`;
    await writeFile(tmp, events.map((e) => JSON.stringify(e) + '\n').join(''), { mode: 0o600 });
    await rename(tmp, this.file);
    this.lines = events.length;
  }
}
