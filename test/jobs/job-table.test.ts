// The in-memory table under the queue: deadlines come out in time order, and entries of jobs that
// moved on (a taken job's 24 h ttl entry) do not pile up in the heap.
import { expect, test } from 'vitest';
import { DeadlineHeap } from '../../core/jobs/deadline-heap.ts';
import { JobTable } from '../../core/jobs/job-table.ts';

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
