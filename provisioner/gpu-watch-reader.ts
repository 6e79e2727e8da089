// What one host's watch session says, turned into GPU observations (docs/gpu-health.md), without I/O:
// the watch script's lines (fleet/gpu-watch-script.ts) go in, batches come out for the watcher to
// commit. It keeps the host's position in its kernel log (journald cursor, or boot + monotonic time)
// so no line is counted twice, the counter values last counted so no value is counted twice, which
// kernel lines are from before the watcher first read the host (not live), and which bus id is which GPU.
import type { GpuObservation, HostGpu, HostGpuWatch } from '../model/index.ts';
import { COUNTER_TABLE } from '../model/index.ts';
import { atOrBefore, busKey, normalBootId, parseDmesgLine, parseDriverLine, parseJournalLine, PollFrames, type GpuSample, type KernelLine, type PollFrame } from '../fleet/index.ts';

/** What to commit: observations per GPU uuid, and the watch state as it is after them. */
export interface WatchBatch {
  observations: { uuid: string; observation: GpuObservation }[];
  /** uuid → nvidia-smi bus id newly learned */
  busIds: Record<string, string>;
  watch: HostGpuWatch;
  /** observations, bus ids or counters changed (worth a write now); false: only the log position moved */
  substantive: boolean;
}

export interface WatchStats {
  kernelLines: number;
  driverLines: number;
  polls: number;
  pollFailures: number;
  unmatchedLines: number;
  /** the last successful poll's samples (values by field), by uuid */
  lastSamples: GpuSample[];
  /** raw nvidia-smi answers of the last poll (Q and r rows), for the device check */
  lastRaw: string[];
  readerExit: string | null;
  fields: string | null;
  remappedFields: string | null;
}

const emptyWatch = (): HostGpuWatch => ({ source: null, cursor: null, bootId: null, monotonicUs: null, firstReadAt: null, firstReadBootId: null, firstReadMonotonicUs: null, counters: {} });

interface Pending {
  pci: string | null;
  observation: GpuObservation;
}

export class GpuWatchReader {
  private watch: HostGpuWatch;
  private readonly gpus: HostGpu[];
  private readonly busToUuid = new Map<string, string>();
  /** uuid → the bus id the host record has (or this session learned) */
  private readonly gpuBus = new Map<string, string>();
  private sessionBoot: string | null = null;
  /** this session's lines seen at the stored position's exact time (handledBefore) */
  private seenAtPosition = 0;
  private observations: WatchBatch['observations'] = [];
  private busIds: Record<string, string> = {};
  private substantive = false;
  private moved = false;
  /** kernel observations waiting for a poll to say which GPU their bus id is */
  private pending: Pending[] = [];
  private readonly frames = new PollFrames();
  /** each successful poll's samples of the host's GPUs, as read (the utilisation charts: docs/gpu-metrics.md) */
  onSamples: ((samples: GpuSample[]) => void) | null = null;
  readonly stats: WatchStats = { kernelLines: 0, driverLines: 0, polls: 0, pollFailures: 0, unmatchedLines: 0, lastSamples: [], lastRaw: [], readerExit: null, fields: null, remappedFields: null };

  constructor(
    watch: HostGpuWatch | undefined,
    gpus: readonly HostGpu[],
    private readonly now: () => string = () => new Date().toISOString(),
  ) {
    this.watch = { ...emptyWatch(), ...watch, counters: structuredClone(watch?.counters ?? {}) };
    this.gpus = [...gpus];
    for (const g of gpus) if (g.busId) {
      this.gpuBus.set(g.uuid, g.busId);
      this.learnBus(g.busId, g.uuid, false);
    }
  }

  /** One line of the session's stdout: the start line, then kernel lines. */
  stdout(line: string): void {
    if (line.startsWith('@@start ')) return this.start(line);
    if (line.trim() === '') return;
    const journal = parseJournalLine(line);
    const k: KernelLine = journal ?? { ...parseDmesgLine(line), bootId: this.sessionBoot };
    const source = journal ? 'journal' : 'dmesg';
    if (source === 'dmesg' && this.handledBefore(k)) return;
    this.stats.kernelLines++;
    this.advance(k, source);
    this.moved = true;
    const d = parseDriverLine(k.text);
    if (!d) return;
    this.stats.driverLines++;
    if (d.kind === 'gpu-at') return void this.learnBus(d.pci, d.uuid, true);
    const live = !(this.watch.firstReadBootId !== null && k.bootId === this.watch.firstReadBootId && k.monotonicUs !== null && this.watch.firstReadMonotonicUs !== null && k.monotonicUs <= this.watch.firstReadMonotonicUs);
    const at = this.now();
    const observation: GpuObservation = d.kind === 'xid'
      ? { kind: 'xid', xid: d.xid, live, detail: k.text.trim(), at }
      : { kind: 'counter', counter: 'gpu.fallen_off_bus', live, detail: k.text.trim(), at };
    this.pending.push({ pci: d.pci, observation });
    this.mapPending(false);
  }

  /** One line of the session's stderr: the fields, poll frames, the log reader's end. */
  stderr(line: string): void {
    if (line.startsWith('X ')) {
      this.stats.readerExit = line.slice(2).trim();
      return;
    }
    const frame = this.frames.feed(line);
    this.stats.fields = this.frames.fields;
    this.stats.remappedFields = this.frames.remappedFields;
    if (frame) this.endPoll(frame);
  }

  /** No poll ended in time (nvidia-smi hung where `timeout` is missing): a failed read of every GPU. */
  pollHung(seconds: number): void {
    this.failedRead(`no answer from nvidia-smi within ${seconds} s`);
  }

  /** The position when nothing else changed: whether it moved since the last batch. */
  get positionMoved(): boolean {
    return this.moved;
  }

  /** What to commit since the last call, or null when nothing changed. */
  drain(force = false): WatchBatch | null {
    if (!this.substantive && !(force && this.moved)) return null;
    const b: WatchBatch = { observations: this.observations, busIds: this.busIds, watch: structuredClone(this.watch), substantive: this.substantive };
    this.observations = [];
    this.busIds = {};
    this.substantive = false;
    this.moved = false;
    return b;
  }

  /**
   * dmesg prints its whole ring buffer at each start: what was handled before is passed over. Lines
   * share a timestamp when they come within its resolution, so the position is the time and how many
   * lines at that time were handled: that many are passed over again, the next one at it is new.
   */
  private handledBefore(k: KernelLine): boolean {
    if (!atOrBefore(k, this.watch)) return false;
    if (k.monotonicUs !== this.watch.monotonicUs) return true;
    this.seenAtPosition++;
    return this.seenAtPosition <= (this.watch.linesAtMonotonic ?? 1);
  }

  /** The position after a line is handled. */
  private advance(k: KernelLine, source: 'journal' | 'dmesg'): void {
    const bootId = k.bootId ?? this.watch.bootId;
    const monotonicUs = k.monotonicUs ?? this.watch.monotonicUs;
    const same = bootId === this.watch.bootId && monotonicUs !== null && monotonicUs === this.watch.monotonicUs;
    const linesAtMonotonic = same ? (this.watch.linesAtMonotonic ?? 1) + 1 : 1;
    if (!same) this.seenAtPosition = 1;
    this.watch = { ...this.watch, source, cursor: k.cursor ?? this.watch.cursor, bootId, monotonicUs, linesAtMonotonic };
  }

  private start(line: string): void {
    this.seenAtPosition = 0;
    const [, boot, uptime] = line.trim().split(/\s+/);
    this.sessionBoot = boot && boot !== '-' ? normalBootId(boot) : null;
    const up = Number(uptime);
    if (this.watch.firstReadAt === null) {
      // the first read ever: what the kernel logged before now is history (recorded, never acted on)
      this.watch = { ...this.watch, firstReadAt: this.now(), firstReadBootId: this.sessionBoot, firstReadMonotonicUs: Number.isFinite(up) ? Math.round(up * 1e6) : null };
      this.substantive = true;
    }
  }

  private learnBus(pci: string, uuid: string, fromLog: boolean): void {
    const key = busKey(pci);
    if (key === null) return;
    this.busToUuid.set(key, uuid);
    if (fromLog) this.mapPending(false);
  }

  /** Hands kernel observations to their GPUs; after a successful poll, one no GPU matches is dropped. */
  private mapPending(final: boolean): void {
    const still: Pending[] = [];
    for (const p of this.pending) {
      const uuid = p.pci ? this.busToUuid.get(busKey(p.pci) ?? '') : undefined;
      if (uuid && this.gpus.some((g) => g.uuid === uuid)) this.observe(uuid, p.observation);
      else if (final) this.stats.unmatchedLines++;
      else still.push(p);
    }
    this.pending = still;
  }

  private observe(uuid: string, observation: GpuObservation): void {
    this.observations.push({ uuid, observation });
    this.substantive = true;
  }

  private counter(uuid: string, name: string, value: number): number | undefined {
    const mine = (this.watch.counters[uuid] ??= {});
    const prev = mine[name];
    if (prev !== value) {
      mine[name] = value;
      this.substantive = true;
    }
    return prev;
  }

  private failedRead(why: string): void {
    this.stats.pollFailures++;
    for (const g of this.gpus) {
      const prev = this.counter(g.uuid, 'nvidia-smi.failed', 1);
      if (prev !== 1) this.observe(g.uuid, { kind: 'counter', counter: 'nvidia-smi.failed', live: true, detail: why, at: this.now() });
    }
    this.mapPending(false);
  }

  private endPoll(f: PollFrame): void {
    this.stats.polls++;
    this.stats.lastRaw = f.raw;
    if (f.rc !== 0) return this.failedRead(`nvidia-smi exited ${f.rc}${f.rc === 124 ? ' (timed out)' : ''}: ${(f.raw[0] ?? '').slice(0, 200)}`);
    const samples = f.samples;
    this.stats.lastSamples = samples;
    this.onSamples?.(samples.filter((s) => s.uuid !== null && this.gpus.some((g) => g.uuid === s.uuid)));
    const at = this.now();
    const listed = new Set<string>();
    for (const s of samples) {
      if (!s.uuid) continue;
      listed.add(s.uuid);
      if (!this.gpus.some((g) => g.uuid === s.uuid)) continue; // a GPU the host record does not have: a refresh adds it
      this.learnBus(s.busId, s.uuid, false);
      if (this.gpuBus.get(s.uuid) !== s.busId) {
        this.busIds[s.uuid] = s.busId;
        this.gpuBus.set(s.uuid, s.busId);
        this.substantive = true;
      }
      this.counter(s.uuid, 'nvidia-smi.failed', 0);
      for (const rule of COUNTER_TABLE) {
        const v = s.values[rule.counter];
        if (v === undefined || v === null) continue; // no such counter here: never an error
        if (rule.trigger === 'rise') {
          const prev = this.counter(s.uuid, rule.counter, v);
          // the first value read is the baseline; a lower one is a reset (volatile counts restart with the driver)
          if (prev !== undefined && v > prev) this.observe(s.uuid, { kind: 'counter', counter: rule.counter, live: true, detail: `rose from ${prev} to ${v}`, at });
        } else {
          const on = v >= 1 ? 1 : 0;
          const prev = this.counter(s.uuid, rule.counter, on);
          if (on === 1 && prev !== 1) this.observe(s.uuid, { kind: 'counter', counter: rule.counter, live: prev !== undefined, detail: 'set', at });
        }
      }
    }
    for (const g of this.gpus) {
      const missing = listed.has(g.uuid) ? 0 : 1;
      const prev = this.counter(g.uuid, 'gpu.missing', missing);
      if (missing === 1 && prev !== 1) this.observe(g.uuid, { kind: 'counter', counter: 'gpu.missing', live: true, detail: 'nvidia-smi no longer lists this GPU', at });
    }
    this.mapPending(true);
  }
}
