// The job log on a full disk, for real: the queue's directory on a small tmpfs that the test fills
// until the kernel answers ENOSPC (test/store/small-fs.ts), then frees. A write that cannot reach the
// log refuses the operations whose records it held (JOB_QUEUE_UNAVAILABLE, 503), including a take
// that was handed a job in it; nothing of them is left in memory or on disk; the failure is told to
// onError once and /readyz's check says so; and the queue goes on by itself once there is room again
// (no restart). A restart then replays every acknowledged change and no refused one.
import { mkdir, mkdtemp, readdir, readFile, rm, rmdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import type { GpufleetError } from '../../../model/base/errors.ts';
import { EmbeddedJobQueue } from '../../../core/jobs/index.ts';
import { queueReadiness, Readiness } from '../../../core/readiness.ts';
import { canMount, mountSmallFs, type SmallFs } from '../../store/small-fs.ts';
import { startTestControlPlane } from '../../harness/control-plane.ts';
import { waitFor } from '../../harness/wait-for.ts';
import os from 'node:os';
import { itEmbeddedOnly } from '../../harness/embedded-only.ts';

let fs: SmallFs | undefined;
const stop: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of stop.splice(0).reverse()) await f().catch(() => undefined);
  await fs?.unmount();
  fs = undefined;
});

/** an input whose record is far larger than what a filled tmpfs leaves in a file's last page */
const big = { blob: 'x'.repeat(256 * 1024) };
const enq = (q: EmbeddedJobQueue, input: unknown) => q.enqueue({ endpointId: 'ep', accountId: 'acct', input, sync: false });

async function logText(dir: string): Promise<string> {
  let all = '';
  for (const n of (await readdir(dir)).sort()) all += await readFile(path.join(dir, n), 'utf8');
  return all;
}

describe.skipIf(!canMount)('job log on a full disk', () => {
  test('a failed log write refuses its operations with JOB_QUEUE_UNAVAILABLE, leaves nothing of them, and the queue recovers when space frees', async () => {
    fs = await mountSmallFs(4);
    const dir = path.join(fs.dir, 'jobs');
    const errors: GpufleetError[] = [];
    const q = await EmbeddedJobQueue.open({ dir, sweepIntervalMs: 50, onError: (e) => errors.push(e) });
    stop.push(() => q.close());
    const readiness = new Readiness();
    readiness.set('jobs', queueReadiness(q));

    const a = await enq(q, { n: 'a' });
    const [takenA] = await q.take('ep', 'w1');
    expect(takenA?.id).toBe(a.id);
    expect(await readiness.report()).toEqual({ ready: true, checks: { jobs: 'ok' } });

    await fs.fill();
    // a worker parked in take when the failing enqueue comes: the job goes into the same write
    const parked = q.take('ep', 'w2', { waitMs: 10_000 });
    await waitFor('the take parked', async () => (await q.depth('ep')).waitingWorkers === 1, 5_000, 5);
    const refused = await Promise.allSettled([enq(q, big), enq(q, { n: 'small' }), q.complete(a.id, 'w1', { output: big })]);
    for (const r of refused) expect(r).toMatchObject({ status: 'rejected', reason: { code: 'JOB_QUEUE_UNAVAILABLE', status: 503, fields: { errno: 'ENOSPC' } } });
    // the take that was handed the refused job is refused too, never answered with it
    await expect(parked).rejects.toMatchObject({ code: 'JOB_QUEUE_UNAVAILABLE' });
    expect(errors.map((e) => [e.code, e.fields.errno])).toEqual([['JOB_QUEUE_UNAVAILABLE', 'ENOSPC']]);
    const report = await readiness.report();
    expect(report.ready).toBe(false);
    expect(report.checks.jobs).toMatch(/a job log write failed: .*no space left on device/);

    // the next operation finds the state as it is on disk: `a` running under w1, nothing else
    expect(await q.counts('ep')).toEqual({ completed: 0, failed: 0, inProgress: 1, inQueue: 0, retried: 0 });
    expect(await q.get(a.id)).toMatchObject({ status: 'IN_PROGRESS', workerId: 'w1' });
    expect(await q.heldBy('w1')).toEqual([a.id]);
    // and the files hold no trace of the refused changes
    const text = await logText(dir);
    expect(text).not.toContain('"small"');
    expect(text).not.toContain('xxxxxxxx');

    // still full: refused again, and told again (not a silent refusal from then on)
    await expect(enq(q, big)).rejects.toMatchObject({ code: 'JOB_QUEUE_UNAVAILABLE' });
    expect(errors).toHaveLength(2);
    expect((await readiness.report()).ready).toBe(false);

    await fs.free();
    // the queue finds out by itself (its probe once a second) that the disk takes writes again
    await waitFor('readiness back', async () => (await readiness.report()).ready, 5_000, 50);
    const b = await enq(q, big);
    expect((await q.complete(a.id, 'w1', { output: { ok: true } })).status).toBe('COMPLETED');
    const [takenB] = await q.take('ep', 'w2');
    expect(takenB?.id).toBe(b.id);
    expect(await q.counts('ep')).toEqual({ completed: 1, failed: 0, inProgress: 1, inQueue: 0, retried: 0 });

    // a restart replays the acknowledged changes and no refused one
    const again = await EmbeddedJobQueue.open({ dir, sweepIntervalMs: 0 });
    stop.push(() => again.close());
    expect(again.repairs).toEqual([]);
    expect(await again.counts('ep')).toEqual({ completed: 1, failed: 0, inProgress: 1, inQueue: 0, retried: 0 });
    expect(await again.get(a.id)).toMatchObject({ status: 'COMPLETED', output: { ok: true } });
    expect(await again.get(b.id)).toMatchObject({ status: 'IN_PROGRESS', workerId: 'w2' });
  });

  test('a compaction that cannot write its snapshot is told to onError, keeps every record, and the next one succeeds', async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-jobs-compact-'));
    stop.push(() => rm(base, { recursive: true, force: true }));
    const dir = path.join(base, 'jobs');
    const errors: GpufleetError[] = [];
    // compaction after every change (no snapshot yet, no floor), as soon as the last one finished
    let q = await EmbeddedJobQueue.open({ dir, sweepIntervalMs: 0, compactAfterBytes: 0, onError: (e) => errors.push(e) });
    // the next snapshot's temp file cannot be made: a directory sits where it goes
    const gen = Math.max(...(await readdir(dir).then((ns) => ns.map((n) => Number(/-(\d+)\.log/.exec(n)?.[1] ?? 0)))), 0) + 1;
    await mkdir(path.join(dir, `snap-${String(gen).padStart(12, '0')}.log.tmp`));
    const a = await enq(q, { n: 'a' });
    await waitFor('the compaction failure told', async () => errors.length > 0, 5_000, 10);
    expect(errors[0]).toMatchObject({ code: 'JOB_QUEUE_UNAVAILABLE' });
    expect(errors[0]!.message).toMatch(/could not compact its log.*EISDIR/);
    expect(q.writeBlocker()).toBeNull(); // the log itself still takes writes
    await rmdir(path.join(dir, `snap-${String(gen).padStart(12, '0')}.log.tmp`));
    const b = await enq(q, { n: 'b' });
    await waitFor('a snapshot written', async () => (await readdir(dir)).some((n) => n.startsWith('snap-') && !n.endsWith('.tmp')), 5_000, 10);
    await q.close();
    q = await EmbeddedJobQueue.open({ dir, sweepIntervalMs: 0 });
    stop.push(() => q.close());
    expect((await q.get(a.id))?.input).toEqual({ n: 'a' });
    expect((await q.get(b.id))?.input).toEqual({ n: 'b' });
  });
});

describe.skipIf(!canMount)('control plane whose job log is on a full disk', () => {
  // the embedded queue's own log on a filled tmpfs: on PostgreSQL there is no log in the data
  // directory (the queue's failure there, its database gone, answers 503 STORE_UNAVAILABLE and names
  // the queue in /readyz: test/core/jobs/postgres-queue-replicas.test.ts, test/api/postgres-replicas.test.ts)
  itEmbeddedOnly('run answers 503 problem+json, /readyz names the job queue, and both recover once space frees', { timeout: 60_000 }, async () => {
    fs = await mountSmallFs(4);
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-cp-jobsfull-'));
    // only the job log is on the small filesystem; the store writes beside it as usual
    await symlink(fs.dir, path.join(dataDir, 'jobs'));
    const cp = await startTestControlPlane({ dataDir });
    stop.push(async () => {
      await cp.close();
      await rm(dataDir, { recursive: true, force: true });
    });
    const user = await cp.newAccount('read_write', 100);
    const tpl = (await (await cp.api('/v2/templates', { method: 'POST', key: user.key, json: { name: 't', image: 'busybox', serverless: true } })).json()) as { id: string };
    const ep = (await (await cp.api('/v1/endpoints', { method: 'POST', key: user.key, json: { templateId: tpl.id, gpuTypeIds: ['ADA_24'], workersMin: 0, workersMax: 0 } })).json()) as { id: string };
    const run = (input: unknown) => cp.api(`/v2/${ep.id}/run`, { method: 'POST', key: user.key, json: { input } });
    expect((await run({ n: 1 })).status).toBe(200);
    expect((await cp.api('/readyz', { key: null })).status).toBe(200);

    await fs.fill();
    const refused = await run(big);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await refused.json()).toMatchObject({ status: 503, code: 'JOB_QUEUE_UNAVAILABLE' });
    const ready = await cp.api('/readyz', { key: null });
    expect(ready.status).toBe(503);
    expect(JSON.stringify(await ready.json())).toMatch(/job log write failed/);
    expect((await (await cp.api(`/v2/${ep.id}/health`, { key: user.key })).json()) as { jobs: { inQueue: number } }).toMatchObject({ jobs: { inQueue: 1 } });

    await fs.free();
    await waitFor('/readyz ready again', async () => (await cp.api('/readyz', { key: null })).status === 200, 10_000, 100);
    expect((await run({ n: 2 })).status).toBe(200);
    expect((await (await cp.api(`/v2/${ep.id}/health`, { key: user.key })).json()) as { jobs: { inQueue: number } }).toMatchObject({ jobs: { inQueue: 2 } });
  });
});
