// JobTable.listJobs, the embedded queue's side of the job history port: the same pages as a sort of
// every job, newest first by (createdAt, id) with ties on createdAt, for every cursor, limit and
// status filter; other accounts' and other endpoints' jobs and expired results never in a page.
import { expect, test } from 'vitest';
import { JobTable } from '../../../core/jobs/job-table.ts';
import type { Job, JobStatus } from '../../../model/index.ts';

const policy = { executionTimeout: 600_000, ttl: 86_400_000, lowPriority: false };
const NOW = 1_000_000;

/** 300 jobs, createdAt from a small range (many ties), enqueued in a shuffled order, in every status */
function world(): { table: JobTable; mine: Job[] } {
  const table = new JobTable({ leaseMs: 30_000, retention: { asyncMs: 1_800_000, syncMs: 60_000 } });
  let seed = 7;
  const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  for (let i = 0; i < 300; i++) {
    const id = `j${rnd(1_000_000).toString(36)}-${i}`;
    const accountId = i % 5 === 0 ? 'other' : 'me';
    const endpointId = i % 7 === 0 ? 'ep-2' : 'ep';
    table.apply({ t: 'enq', job: { id, endpointId, accountId, input: i, policy, sync: false, createdAt: NOW - 10_000 + rnd(40) } });
    const fate = rnd(5);
    if (fate === 0) continue; // IN_QUEUE
    if (fate === 4) {
      table.apply({ t: 'fin', id, at: NOW - 5000, status: 'CANCELLED', ...(i % 3 === 0 ? { expired: true } : {}) });
      continue;
    }
    table.apply({ t: 'take', id, worker: 'w', at: NOW - 9000 });
    if (fate === 1) continue; // IN_PROGRESS
    table.apply({ t: 'fin', id, at: NOW - 8000, status: fate === 2 ? 'COMPLETED' : 'FAILED', ...(fate === 2 ? { output: i } : { error: 'boom' }) });
  }
  const mine = [...table.jobs.values()]
    .filter((j) => j.endpointId === 'ep' && j.accountId === 'me' && table.find(j.id, NOW))
    .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return { table, mine };
}

test('every page equals the same slice of a full sort, for each limit and status filter, walking the cursor to the end', () => {
  const { table, mine } = world();
  expect(new Set(mine.map((j) => j.createdAt)).size).toBeLessThan(mine.length); // ties on createdAt are exercised
  expect(table.jobs.size).toBeGreaterThan(mine.length); // other accounts, another endpoint, expired results exist
  const filters: (readonly JobStatus[] | undefined)[] = [undefined, ['IN_QUEUE'], ['FAILED', 'CANCELLED'], ['COMPLETED', 'IN_PROGRESS', 'TIMED_OUT']];
  for (const statuses of filters) {
    const want = mine.filter((j) => !statuses || statuses.includes(j.status)).map((j) => j.id);
    for (const limit of [1, 3, 20, 100, 1000]) {
      const got: string[] = [];
      let after: { createdAt: number; id: string } | undefined;
      for (;;) {
        const page = table.listJobs({ endpointId: 'ep', accountId: 'me', limit, ...(statuses ? { statuses } : {}), ...(after ? { after } : {}) }, NOW);
        expect(page.length).toBeLessThanOrEqual(limit);
        if (!page.length) break;
        got.push(...page.map((j) => j.id));
        after = { createdAt: page.at(-1)!.createdAt, id: page.at(-1)!.id };
      }
      expect(got, `${String(statuses)} limit ${limit}`).toEqual(want);
    }
  }
  expect(table.listJobs({ endpointId: 'ep', accountId: 'me', limit: 0 }, NOW)).toEqual([]);
  expect(table.listJobs({ endpointId: 'nope', accountId: 'me', limit: 10 }, NOW)).toEqual([]);
});

test('paging reads from the newest end and stops: 5,000 jobs in creation order cost about a page each, and a job added out of order is still in its place', () => {
  const table = new JobTable({ leaseMs: 30_000, retention: { asyncMs: 1_800_000, syncMs: 60_000 } });
  for (let i = 0; i < 5000; i++) table.apply({ t: 'enq', job: { id: `j${String(i).padStart(5, '0')}`, endpointId: 'ep', accountId: 'me', input: i, policy, sync: false, createdAt: NOW - 100_000 + i * 10 } });
  // one added last but created first (a replayed or imported job): it belongs on the last page
  table.apply({ t: 'enq', job: { id: 'late', endpointId: 'ep', accountId: 'me', input: 0, policy, sync: false, createdAt: NOW - 200_000 } });
  const got: string[] = [];
  let after: { createdAt: number; id: string } | undefined;
  const perPage: number[] = [];
  for (;;) {
    const before = table.listScanned;
    const page = table.listJobs({ endpointId: 'ep', accountId: 'me', limit: 100, ...(after ? { after } : {}) }, NOW);
    perPage.push(table.listScanned - before);
    if (!page.length) break;
    got.push(...page.map((j) => j.id));
    after = { createdAt: page.at(-1)!.createdAt, id: page.at(-1)!.id };
  }
  expect(got).toHaveLength(5001);
  expect(got.at(-1)).toBe('late');
  expect(got[0]).toBe('j04999');
  const total = perPage.reduce((a, b) => a + b, 0);
  console.log(`ids looked at paging 5,001 jobs by 100: ${total} over ${perPage.length} pages (max ${Math.max(...perPage)} a page)`);
  // a page looks at its own 100 jobs, the one added out of order and the one that stops it (not 5,001 a page, 260,052 in all)
  expect(Math.max(...perPage)).toBeLessThanOrEqual(102);
  expect(total).toBeLessThanOrEqual(52 * 102);
});
