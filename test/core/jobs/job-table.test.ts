// The in-memory table under the queue: deadlines come out in time order, and entries of jobs that
// moved on (a taken job's 24 h ttl entry) do not pile up in the heap.
import { describe, expect, test } from 'vitest';
import { DeadlineHeap } from '../../../core/jobs/deadline-heap.ts';
import { JobTable } from '../../../core/jobs/job-table.ts';

test('the deadline heap pops due entries earliest first and nothing before its time', () => {
  const h = new DeadlineHeap();
  const ats = [50, 10, 40, 10, 30, 20, 60, 0];
  ats.forEach((at, i) => h.push({ at, id: `j${i}`, kind: 'ttl' }));
  expect(h.popDue(-1)).toBeUndefined();
  const out: number[] = [];
  for (let d = h.popDue(45); d; d = h.popDue(45)) out.push(d.at);
  expect(out).toEqual([0, 10, 10, 20, 30, 40]);
  expect(h.size).toBe(2);
});

test('stale deadline entries are rebuilt away instead of piling up (10,000 jobs taken within their 24 h ttl)', () => {
  const t = new JobTable({ leaseMs: 30_000, retention: { asyncMs: 1_800_000, syncMs: 60_000 } });
  const policy = { executionTimeout: 600_000, ttl: 86_400_000, lowPriority: false };
  let maxHeap = 0;
  for (let i = 0; i < 10_000; i++) {
    const id = `job-${i}`;
    t.apply({ t: 'enq', job: { id, endpointId: 'ep', accountId: 'a', input: i, policy, sync: true, createdAt: i } });
    t.apply({ t: 'take', id, worker: 'w', at: i });
    t.apply({ t: 'fin', id, at: i, status: 'COMPLETED', output: i });
    t.remove(id); // as retention would, long before the job's ttl entry is due
    maxHeap = Math.max(maxHeap, t.deadlines.size);
  }
  expect(t.jobs.size).toBe(0);
  expect(maxHeap).toBeLessThanOrEqual(1024 + 4);
  expect(t.nextDue(Number.MAX_SAFE_INTEGER)).toBeUndefined();
});

describe('completedAfter: an endpoint COMPLETED jobs in (finishedAt, id) order (the index under completedJobs)', () => {
  const policy = { executionTimeout: 600_000, ttl: 86_400_000, lowPriority: false };
  const table = () => new JobTable({ leaseMs: 30_000, retention: { asyncMs: 1_800_000, syncMs: 60_000 } });
  const complete = (t: JobTable, id: string, at: number, status: 'COMPLETED' | 'FAILED' = 'COMPLETED', endpointId = 'ep') => {
    t.apply({ t: 'enq', job: { id, endpointId, accountId: 'a', input: null, policy, sync: false, createdAt: 0 } });
    t.apply({ t: 'take', id, worker: 'w', at });
    t.apply({ t: 'fin', id, at, status, ...(status === 'COMPLETED' ? { output: id } : { error: 'boom' }) });
  };
  const ids = (t: JobTable, after = { finishedAt: 0, id: '' }, limit = 100, now = 0) => t.completedAfter('ep', after, limit, now).map((j) => j.id);
  const indexLength = (t: JobTable) => (t as unknown as { completions: { indexed: Map<string, { list: unknown[] }> } }).completions.indexed.get('ep')?.list.length;

  test('jobs completed after the first page are found in order, one stamped earlier (the clock stepped back) in its place', () => {
    const t = table();
    complete(t, 'b', 20);
    complete(t, 'a', 20);
    complete(t, 'f', 5, 'FAILED');
    complete(t, 'x', 1, 'COMPLETED', 'other');
    expect(ids(t)).toEqual(['a', 'b']); // indexed here
    complete(t, 'd', 30);
    complete(t, 'c', 10); // earlier than what is there
    expect(ids(t)).toEqual(['c', 'a', 'b', 'd']);
    expect(ids(t, { finishedAt: 20, id: 'a' })).toEqual(['b', 'd']);
    expect(ids(t, { finishedAt: 20, id: '' }, 2)).toEqual(['a', 'b']);
    expect(ids(t, { finishedAt: 30, id: 'd' })).toEqual([]);
  });

  test('removed and expired jobs are left out, a job put back is listed once, and the index is compacted as jobs go', () => {
    const t = table();
    for (let i = 0; i < 2_000; i++) complete(t, `j${String(i).padStart(4, '0')}`, i);
    expect(ids(t, undefined, 3)).toEqual(['j0000', 'j0001', 'j0002']);
    // put back as it was (an import): one entry answered, not two
    const j1 = t.jobs.get('j0001')!;
    t.remove('j0001');
    t.apply({ t: 'put', job: j1, stream: [] });
    expect(ids(t, undefined, 3)).toEqual(['j0000', 'j0001', 'j0002']);
    for (let i = 0; i < 1_500; i++) t.remove(`j${String(i).padStart(4, '0')}`);
    expect(ids(t, undefined, 2)).toEqual(['j1500', 'j1501']);
    expect(indexLength(t)).toBeLessThanOrEqual(1_000); // compacted once half were gone: not the 2,001 entries added
    // results past their retention (30 min after finishing) are not answered even before removal
    expect(ids(t, undefined, 2, 1_800_000 + 1_500)).toEqual(['j1501', 'j1502']);
    for (let i = 1_500; i < 2_000; i++) t.remove(`j${i}`);
    expect(ids(t)).toEqual([]);
    complete(t, 'late', 5_000);
    expect(ids(t)).toEqual(['late']);
  });
});
