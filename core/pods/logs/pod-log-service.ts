// A pod's logs (GET /v2/pods/{id}/logs): the container's output, read on its host by a
// ContainerLogSource (the provisioner implements it over SSH), and the pod's own events as `system`
// lines. Everything that can refuse the request (not the caller's pod, no container, host down)
// is decided before the first entry, so it is an HTTP error and not a broken stream. Following a
// container takes one of the account's share of its host's streams (core/fair-share) until it ends.
import { GpufleetError, isGpufleetError, type FleetEvent, type HostRecord, type PodRecord } from '../../../model/index.ts';
import type { StoreReader } from '../../../store/index.ts';
import type { EventService } from '../../observability/index.ts';
import { HostStreamShares } from '../../fair-share/index.ts';
import { AsyncQueue } from './async-queue.ts';
import { formatCursor, rfc3339Nanos, type LogCursor, type LogSource, type PodLogQuery } from './log-query.ts';
import type { Principal } from '../../../model/index.ts';

export interface ContainerLogLine {
  stream: 'stdout' | 'stderr';
  /** docker's RFC 3339 timestamp, nanoseconds */
  ts: string;
  line: string;
}

export interface ContainerLogRequest {
  host: HostRecord;
  podId: string;
  /** lines before the live ones; 'all' from `since` on */
  tail: number | 'all';
  /** RFC 3339, checked; the lines at or after it */
  since: string | null;
  /** false: the lines there are now, then the end (`docker logs` without --follow) */
  follow: boolean;
}

/** The port the provisioner implements: one pod container's log, followed on its host. */
export interface ContainerLogSource {
  /**
   * Starts reading; resolves once the host runs the command. The iteration ends when the container
   * stops, or with `follow: false` once the lines there are now are read (or cannot be read: it
   * throws), and ending it early stops the command on the host.
   */
  follow(req: ContainerLogRequest): Promise<AsyncIterable<ContainerLogLine>>;
}

export interface PodLogEntry {
  /** the SSE id: resumes after this entry as Last-Event-ID */
  id: string;
  source: LogSource;
  /** container entries: which of the container's streams */
  stream?: 'stdout' | 'stderr';
  line: string;
  ts: string;
}

export interface PodLogStream {
  entries: AsyncIterable<PodLogEntry>;
  /** the client went: stop reading on the host */
  close(): void;
}

/** entries held for a slow client before the host's side is paused */
const HIGH_WATER = 1000;

export class PodLogService {
  private source: ContainerLogSource | null = null;

  constructor(
    private readonly store: StoreReader,
    private readonly events: EventService,
    private readonly shares = new HostStreamShares(),
  ) {}

  /** Called by the provisioner, which reads the hosts, when it starts in this process. */
  useSource(source: ContainerLogSource | null): void {
    this.source = source;
  }

  async open(principal: Principal, podId: string, q: PodLogQuery): Promise<PodLogStream> {
    const pod = await this.store.get('pods', podId);
    if (!pod || pod.accountId !== principal.accountId || pod.endpointId !== undefined)
      throw new GpufleetError('NOT_FOUND', `Pod ${podId} was not found.`);
    return this.openRecord(pod, q);
  }

  /**
   * A serverless worker's log (GET /v2/serverless/{id}/workers/{workerId}/logs): a worker is a pod
   * record with `endpointId`, read the same way. Another account's endpoint, or a worker of another
   * endpoint, is 404 as if it did not exist.
   */
  async openWorker(principal: Principal, endpointId: string, workerId: string, q: PodLogQuery): Promise<PodLogStream> {
    const endpoint = await this.store.get('endpoints', endpointId);
    if (!endpoint || endpoint.accountId !== principal.accountId) throw new GpufleetError('NOT_FOUND', `Endpoint ${endpointId} was not found.`);
    const pod = await this.store.get('pods', workerId);
    if (!pod || pod.endpointId !== endpointId || pod.accountId !== principal.accountId)
      throw new GpufleetError('NOT_FOUND', `Worker ${workerId} of endpoint ${endpointId} was not found.`);
    return this.openRecord(pod, q);
  }

  private async openRecord(pod: PodRecord, q: PodLogQuery): Promise<PodLogStream> {
    const host = q.sources.includes('container') ? await this.containerHost(pod, q.sources.length === 1) : null;
    let lines: AsyncIterator<ContainerLogLine> | null = null;
    let releaseShare: () => void = () => undefined;
    if (host) {
      const source = this.source;
      if (!source)
        throw new GpufleetError('UNAVAILABLE', 'Container logs are read by the provisioner, which does not run in this control plane process (GPUFLEET_PROVISIONER=off).');
      const [tail, since] = q.after ? ['all' as const, q.after.ts] : q.since ? ['all' as const, q.since] : [q.tail, null];
      releaseShare = this.shares.acquire(pod.accountId, host.id);
      try {
        lines = (await source.follow({ host, podId: pod.id, tail, since, follow: q.follow }))[Symbol.asyncIterator]();
      } catch (e) {
        releaseShare();
        if (isGpufleetError(e) && (e.code === 'HOST_UNREACHABLE' || e.code === 'HOST_KEY_MISMATCH')) throw unavailable(pod, host, e);
        throw e;
      }
    }
    let stopEvents: () => void = () => undefined;
    const out = new AsyncQueue<PodLogEntry>({ highWater: HIGH_WATER, onCancel: () => close() });
    const close = (): void => {
      stopEvents();
      void lines?.return?.();
      releaseShare();
      out.end();
    };
    if (q.sources.includes('system')) stopEvents = this.systemEntries(pod, q, out, lines === null);
    if (lines)
      void pumpContainer(lines, q.after, out).finally(() => {
        releaseShare();
        stopEvents();
      });
    else if (!q.sources.includes('system') || pod.status === 'TERMINATED' || !q.follow) close();
    return { entries: out, close };
  }

  /** The host whose container holds the pod's log; null when there is none to read and `required` is false. */
  private async containerHost(pod: PodRecord, required: boolean): Promise<HostRecord | null> {
    const host = pod.hostId && pod.status !== 'TERMINATED' ? await this.store.get('hosts', pod.hostId) : undefined;
    if (!host) {
      if (!required) return null;
      throw new GpufleetError('CONFLICT', `Pod ${pod.id} has no container to read logs from (it is ${pod.status}${pod.hostId ? '' : ', on no host'}).`, {
        fields: { status: pod.status },
      });
    }
    if (host.status === 'UNREACHABLE') throw unavailable(pod, host, null);
    return host;
  }

  /** The pod's events as `system` entries: the kept ones the query asks for, then each new one. */
  private systemEntries(pod: PodRecord, q: PodLogQuery, out: AsyncQueue<PodLogEntry>, alone: boolean): () => void {
    const { backlog, subscribe } = this.events.podEvents(pod.id);
    const ids = new EntryIds(q.after);
    const emit = (e: FleetEvent): void => {
      const id = ids.next(e.time);
      if (id) out.push({ id, source: 'system', line: systemLine(e), ts: e.time });
      // alone, the stream follows the pod's events until nothing more can happen to it
      if (alone && e.status === 'TERMINATED') out.end();
    };
    const since = q.since === null ? null : rfc3339Nanos(q.since);
    // a cursor: all kept, EntryIds skips those sent before; `since`: from then on; else the newest `tail`
    const kept = q.after ? backlog : since !== null ? backlog.filter((e) => (rfc3339Nanos(e.time) ?? 0n) >= since) : q.tail === 0 ? [] : backlog.slice(-q.tail);
    let lastSeq = 0;
    for (const e of kept) {
      lastSeq = e.seq;
      emit(e);
    }
    if (!q.follow) return () => undefined;
    return subscribe((e) => e.seq > lastSeq && emit(e));
  }
}

async function pumpContainer(lines: AsyncIterator<ContainerLogLine>, after: LogCursor | null, out: AsyncQueue<PodLogEntry>): Promise<void> {
  const ids = new EntryIds(after);
  try {
    for (;;) {
      const r = await lines.next();
      if (r.done) break;
      const id = ids.next(r.value.ts);
      if (id) out.push({ id, source: 'container', stream: r.value.stream, line: r.value.line, ts: r.value.ts });
      // a slow client holds the host's side back (its SSH window fills), not this process's memory
      await out.drained();
    }
    out.end();
  } catch (e) {
    out.fail(e);
  }
}

/**
 * Ids of one source's entries, in the order they come: `ts`, or `ts#n` for the n-th entry with that
 * same timestamp. null for an entry at or before the resume cursor (already sent before).
 */
class EntryIds {
  private lastTs = '';
  private nth = 0;

  constructor(private readonly after: LogCursor | null) {}

  next(ts: string): string | null {
    this.nth = ts === this.lastTs ? this.nth + 1 : 1;
    this.lastTs = ts;
    if (this.after) {
      const nanos = rfc3339Nanos(ts) ?? 0n;
      if (nanos < this.after.nanos || (nanos === this.after.nanos && this.nth <= this.after.nth)) return null;
    }
    return formatCursor(ts, this.nth);
  }
}

function systemLine(e: FleetEvent): string {
  const what = e.status === null ? e.type : `${e.previousStatus ?? 'new'} → ${e.status}`;
  return `${what}${e.reason ? `: ${e.reason}` : ''} (by ${e.actor})`;
}

function unavailable(pod: PodRecord, host: HostRecord, cause: GpufleetError | null): GpufleetError {
  const why = cause instanceof Error ? cause.message : `it is ${host.status}${host.statusReason ? ` (${host.statusReason})` : ''}`;
  return new GpufleetError('UNAVAILABLE', `The logs of pod ${pod.id} cannot be read now: its host ${host.id} is not answering; ${why}.`, {
    ...(cause ? { cause } : {}),
    fields: { hostId: host.id },
    headers: { 'retry-after': '10' },
  });
}
