// A write that failed is not committed twice across a session restart: the new session re-reads the
// kernel log from the stored position, so the failed batch it would have carried is dropped
// (gpu-watcher.ts carryUnsaved). The watcher runs for real (its timers, reader, flush and restart)
// over an in-memory store whose writes fail until the second session starts, and a fake SSH stream.
import { describe, expect, it } from 'vitest';
import { usageOf, type Services } from '../../core/index.ts';
import type { HostRecord } from '../../model/index.ts';
import { HostGpuWatcher } from '../../provisioner/gpu-watcher.ts';

const F = 'pci.bus_id,uuid,ecc.errors.uncorrected.volatile.total,remapped_rows.pending';
const until = async (ok: () => boolean, ms = 8000) => {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('HostGpuWatcher across a session restart', () => {
  it('an Xid whose write failed in the first session and that the second re-reads is recorded once', async () => {
    let host = { id: 'h1', facts: { gpus: [{ index: 0, uuid: 'GPU-aaaa', name: 'NVIDIA H100 80GB HBM3', memoryMiB: 81559, typeId: 'x' }] } } as unknown as HostRecord;
    const sessions: { feed: (out: string[], err: string[]) => void; end: () => void }[] = [];
    let failedWrites = 0;
    const s = {
      store: {
        get: async () => host,
        transact: async (fn: (tx: unknown) => Promise<unknown>) => {
          if (sessions.length < 2) {
            failedWrites++;
            throw new Error('store down');
          }
          let next = host;
          const r = await fn({ get: async () => host, put: (_c: string, h: HostRecord) => (next = h) });
          host = next;
          return r;
        },
      },
      fleet: { target: () => ({}) },
      gpuHealthSignal: { publish: () => undefined },
      gpuUsage: { sampling: () => undefined, record: (_h: string, gpus: { values: Record<string, number | null | undefined> }[]) => gpus.map((g) => usageOf(g.values)) },
      telemetry: { provisioner: { gpusSampled: () => undefined } },
      sshPool: {
        background: async (_t: unknown, _script: string, h: { stdout: (b: Buffer) => void; stderr: (b: Buffer) => void }) => {
          let end!: (v: { code: number | null }) => void;
          const done = new Promise<{ code: number | null }>((r) => (end = r));
          sessions.push({ feed: (out, err) => { if (out.length) h.stdout(Buffer.from(out.join('\n') + '\n')); if (err.length) h.stderr(Buffer.from(err.join('\n') + '\n')); }, end: () => end({ code: 1 }) });
          return { done, close: () => end({ code: null }), pause() {}, resume() {} };
        },
      },
    } as unknown as Services;
    const w = new HostGpuWatcher(s, 'h1', { pollSeconds: 30, smiTimeoutSeconds: 10, positionWriteMs: 60_000 }, () => true);
    // the same kernel log each session reads from the start (nothing stored yet): one Xid 79 after the first read
    const replay = (i: number) => {
      sessions[i]!.feed(['@@start 43930928-54a0-4b36-a7ae-bce561722870 100.50', '<3>[  101.000000] NVRM: Xid (PCI:0000:18:00): 79, pid=1, GPU has fallen off the bus.'], [`F ${F}`, 'G -', `P ${i + 1} 0`, 'Q 00000000:18:00.0, GPU-aaaa, 0, No', `Z ${i + 1}`]);
    };
    try {
      w.start();
      await until(() => sessions.length === 1);
      replay(0);
      await until(() => failedWrites >= 1);
      sessions[0]!.end();
      await until(() => sessions.length === 2);
      replay(1);
      await until(() => host.gpuWatch !== undefined);
      await w.flush(true);
      const incidents = host.facts.gpus[0]!.incidents ?? [];
      expect(incidents).toHaveLength(1);
      expect(incidents[0]).toMatchObject({ xid: 79, live: true, count: 1, resolvedAt: null });
      expect(w.sessions).toBe(2);
    } finally {
      await w.stop();
    }
  });
});
