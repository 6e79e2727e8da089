// The job queue's process killed with SIGKILL mid-burst: on reopen every acknowledged enqueue is
// there, every acknowledged completion is COMPLETED exactly once (the log holds one final record
// per job), and jobs taken but not completed are IN_PROGRESS under their worker's lease, then back
// in the queue with a retry counted once that lease runs out.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { EmbeddedJobQueue } from '../../../core/jobs/index.ts';
import type { LogRecord } from '../../../core/jobs/log-record.ts';
import { decodeLine } from '../../../store/index.ts';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/crash-child.ts');
const KILL_AFTER_DONE = 1500;

const roots: string[] = [];
afterAll(async () => {
  for (const r of roots) await rm(r, { recursive: true, force: true });
});

interface Acks {
  dir: string;
  enq: Set<string>;
  taken: Map<string, string>;
  done: Map<string, string>;
  dups: number[];
  filesAtKill: string;
}

/** runs the child until it is SIGKILLed (by us, or by itself with `selfKill`), collecting its acknowledgements */
async function burstUntilKilled(selfKill: boolean): Promise<Acks> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-jobs-kill-'));
  roots.push(root);
  const dir = path.join(root, 'jobs');
  const args = ['--import', 'tsx', CHILD, dir, ...(selfKill ? [String(KILL_AFTER_DONE)] : [])];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const acks: Acks = { dir, enq: new Set(), taken: new Map(), done: new Map(), dups: [], filesAtKill: '' };
  let stderr = '';
  let rest = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => {
    const lines = (rest + d.toString()).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      const [kind, id, worker] = line.split(' ');
      if (kind === 'ENQ') acks.enq.add(id!);
      else if (kind === 'TAKE') acks.taken.set(id!, worker!);
      else if (kind === 'DONE') acks.done.set(id!, worker!);
      else if (kind === 'DUP') acks.dups.push(Number(id));
      if (!selfKill && acks.done.size === KILL_AFTER_DONE) child.kill('SIGKILL'); // no close, no flush
    }
  });
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, sig) => resolve(sig)));
  expect(signal, stderr).toBe('SIGKILL');
  expect(acks.done.size).toBeGreaterThanOrEqual(KILL_AFTER_DONE);
  acks.filesAtKill = (await readdir(dir)).sort().join(' ');
  return acks;
}

/** final records per job id, read straight from every log file */
async function finalsInLog(dir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const name of await readdir(dir)) {
    for (const line of (await readFile(path.join(dir, name), 'utf8')).split('\n')) {
      const decoded = line ? decodeLine(Buffer.from(line)) : null;
      if (!decoded?.ok) continue;
      const rec = decoded.value as LogRecord;
      const id = rec.t === 'fin' ? rec.id : rec.t === 'put' && rec.job.status === 'COMPLETED' ? rec.job.id : undefined;
      if (id) out.set(id, (out.get(id) ?? 0) + 1);
    }
  }
  return out;
}

async function checkAfterRestart(label: string, a: Acks): Promise<void> {
  expect(a.dups.every((n) => n === 1), 'a duplicate completion was accepted').toBe(true);
  let now = Date.now(); // a fake clock from here on, so the lease expiry below is exact
  const q = await EmbeddedJobQueue.open({ dir: a.dir, clock: () => now, sweepIntervalMs: 0, leaseMs: 60_000 });
  try {
    const c = await q.counts('ep-crash');
    const held = c.completed + c.failed + c.inProgress + c.inQueue;
    const repairs = q.repairs.map((r) => `${path.basename(r.file)}:${r.line} (${r.reason})`).join(', ') || 'none';
    console.log(
      `${label}: ${a.enq.size} enqueues, ${a.taken.size} takes, ${a.done.size} completions acknowledged; ${held} jobs in the log; ` +
        `files at the kill: ${a.filesAtKill}; torn records cut off: ${repairs}`,
    );
    expect(held).toBeGreaterThanOrEqual(a.enq.size);
    const lost = [];
    for (const id of a.enq) if (!(await q.get(id))) lost.push(id);
    expect(lost, `${lost.length} acknowledged enqueues lost`).toEqual([]);
    for (const [id, worker] of a.done) {
      expect(await q.get(id)).toMatchObject({ status: 'COMPLETED', workerId: worker, output: { by: worker } });
    }
    const twice = [...(await finalsInLog(a.dir))].filter(([, n]) => n > 1);
    expect(twice, 'jobs with more than one final record').toEqual([]);
    const running: string[] = [];
    for (const [id, worker] of a.taken) {
      if (a.done.has(id)) continue;
      const j = (await q.get(id))!;
      // still running under its worker, or completed by it (durable, but not yet acknowledged at the kill)
      expect(j.workerId, `job ${id}`).toBe(worker);
      expect(['IN_PROGRESS', 'COMPLETED']).toContain(j.status);
      if (j.status === 'IN_PROGRESS') {
        expect(j.leaseExpiresAt).toBe(now + 60_000); // a full lease from the restart
        running.push(id);
      }
    }
    expect(running.length).toBeGreaterThan(0);
    // the workers are gone: once the lease runs out, their jobs are queued again, retry counted
    now += 60_000;
    await q.sweep();
    for (const id of running) {
      expect(await q.get(id)).toMatchObject({ status: 'IN_QUEUE', retries: 1 });
      expect(await q.complete(id, a.taken.get(id)!, { output: 'late' }).catch((e: { code: string }) => e.code)).toBe('JOB_LEASE_LOST');
    }
    for (const [id, worker] of a.done) {
      expect(await q.complete(id, worker, { output: 'again' }).catch((e: { code: string }) => e.code)).toBe('JOB_ALREADY_FINAL');
    }
  } finally {
    await q.close();
  }
}

test('SIGKILL from outside mid-burst: nothing acknowledged lost, nothing completed twice', { timeout: 120_000 }, async () => {
  await checkAfterRestart('sigkill (parent)', await burstUntilKilled(false));
});

test('SIGKILL the moment a completion is acknowledged, other writes in flight: the same holds', { timeout: 120_000 }, async () => {
  await checkAfterRestart('sigkill (self, at an ack)', await burstUntilKilled(true));
});
