// Where endpoint metrics outlive the process (docs/serverless.md, "Metrics over time"): each
// process writes the 10-second slots it recorded to the store's `endpointMetricSlots` collection
// (embedded or PostgreSQL), one record per endpoint, slot and writer, at every sample (10 s), and a
// query adds every other writer's slots of its window to its own: another replica's, and this
// process's before a restart. Records past the 24-hour retention are swept.
import type { EndpointMetricSlotRecord } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';

const HOUR_MS = 3600_000;
export const hourOf = (t: number): number => Math.floor(t / HOUR_MS) * HOUR_MS;
export const slotRecordId = (endpointId: string, at: number, writer: string): string => `${endpointId}.${at}.${writer}`;

export class StoredSlots {
  constructor(
    private readonly store: Store,
    /** this process: its own slots are in its memory, newer than what it last wrote */
    readonly writer: string,
  ) {}

  async write(records: EndpointMetricSlotRecord[]): Promise<void> {
    if (!records.length) return;
    await this.store.transact((tx) => {
      for (const r of records) tx.put('endpointMetricSlots', r);
    });
  }

  /** records this process has read from the store for queries (others, carried): a test's measure of their cost */
  recordsRead = 0;

  /** the other writers' slots of the endpoint in the hours that [from, to) touches */
  async others(endpointId: string, from: number, to: number): Promise<EndpointMetricSlotRecord[]> {
    const out: EndpointMetricSlotRecord[] = [];
    for (let hour = hourOf(from); hour < to; hour += HOUR_MS) out.push(...(await this.hourOf(endpointId, hour)));
    return out.filter((r) => r.writer !== this.writer && r.at >= from && r.at < to);
  }

  /**
   * the other writers' last sample before `t`, looking back hour by hour as far as `oldest`, and no
   * further than `ownLast` (this process's own last sample before `t`, in its memory): an older sample
   * of another writer is followed by that one, so the look-back stops at its hour
   */
  async carried(endpointId: string, t: number, oldest: number, ownLast?: number): Promise<EndpointMetricSlotRecord['samples'][number] | null> {
    const floor = Math.max(oldest, ownLast ?? -Infinity);
    for (let hour = hourOf(t); hour >= hourOf(floor); hour -= HOUR_MS) {
      const found = (await this.hourOf(endpointId, hour))
        .filter((r) => r.writer !== this.writer)
        .flatMap((r) => r.samples)
        .filter((s) => s.at < t && (ownLast === undefined || s.at > ownLast))
        .sort((a, b) => a.at - b.at);
      if (found.length) return found.at(-1)!;
    }
    return null;
  }

  private async hourOf(endpointId: string, hour: number): Promise<EndpointMetricSlotRecord[]> {
    const records = await this.store.list('endpointMetricSlots', { endpointId, hour });
    this.recordsRead += records.length;
    return records;
  }

  /**
   * deletes the records of slots before `cutoff`: those of the 3 hours before it, or, after a start
   * (`afterStart`), of the 7 days before it (a fleet down longer leaves older ones, read by no query),
   * hour by hour through the index, never the whole collection at once
   */
  async sweep(cutoff: number, afterStart: boolean): Promise<void> {
    const hours = afterStart ? 7 * 24 : 3;
    for (let h = 1; h <= hours; h++) await this.remove((await this.store.list('endpointMetricSlots', { hour: hourOf(cutoff) - h * HOUR_MS })).map((r) => r.id));
    await this.remove((await this.store.list('endpointMetricSlots', { hour: hourOf(cutoff) })).filter((r) => r.at < cutoff).map((r) => r.id));
  }

  /** a deleted endpoint's records, every writer's */
  async forget(endpointId: string): Promise<void> {
    await this.remove((await this.store.list('endpointMetricSlots', { endpointId })).map((r) => r.id));
  }

  private async remove(ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += 500) {
      const batch = ids.slice(i, i + 500);
      await this.store.transact(async (tx) => {
        // another replica may have swept the same ones
        for (const id of batch) if (await tx.get('endpointMetricSlots', id)) tx.delete('endpointMetricSlots', id);
      });
    }
  }
}
