// Paging through an endpoint's retained COMPLETED jobs (`completedJobs`, what the public model charge
// sweep reads at start and every minute) on the embedded queue's table: the index (core/jobs/
// completion-order.ts) against the scan-and-sort of every retained job per page it replaced, which is
// the baseline here, run on the same table in the same process. N jobs (default 100,000, ten per ms),
// pages of 500, from the start to the end. No floor: the printed ratio is the baseline's time ÷ the index's.
//   npx tsx bench/completed-jobs.ts
import { JobTable } from '../core/index.ts';
import type { Job } from '../model/index.ts';

const N = Number(process.env.N ?? 100_000);
const PAGE = 500;
const now = Date.now();
const table = new JobTable({ leaseMs: 60_000, retention: { asyncMs: 30 * 60_000, syncMs: 60_000 } });
for (let i = 0; i < N; i++) {
  const id = `job-${String(i).padStart(7, '0')}`;
  table.apply({ t: 'enq', job: { id, endpointId: 'ep', accountId: 'a', input: {}, policy: { executionTimeout: 600_000, ttl: 86_400_000, lowPriority: false }, sync: false, createdAt: now } });
  table.apply({ t: 'take', id, worker: 'w', at: now });
  table.apply({ t: 'fin', id, at: now + Math.floor(i / 10), status: 'COMPLETED', output: { cost: 1 } });
}

type Cursor = { finishedAt: number; id: string };
/** the replaced code: every retained job of the endpoint scanned and the later ones sorted, per page */
function scanAndSort(after: Cursor, limit: number): Job[] {
  const out: Job[] = [];
  for (const id of table.byEndpoint.get('ep') ?? []) {
    const job = table.find(id, now);
    if (job?.status === 'COMPLETED' && (job.finishedAt! > after.finishedAt || (job.finishedAt === after.finishedAt && job.id > after.id))) out.push(job);
  }
  return out.sort((a, b) => a.finishedAt! - b.finishedAt! || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, limit);
}

function pageThrough(page: (after: Cursor, limit: number) => Job[]): { ms: number; slowest: number; jobs: number; ids: string[] } {
  const t0 = performance.now();
  let slowest = 0;
  const ids: string[] = [];
  for (let after: Cursor = { finishedAt: 0, id: '' }; ; ) {
    const p0 = performance.now();
    const got = page(after, PAGE);
    slowest = Math.max(slowest, performance.now() - p0);
    if (got.length === 0) break;
    for (const j of got) ids.push(j.id);
    after = { finishedAt: got.at(-1)!.finishedAt!, id: got.at(-1)!.id };
  }
  return { ms: performance.now() - t0, slowest, jobs: ids.length, ids };
}

const index = pageThrough((after, limit) => table.completedAfter('ep', after, limit, now));
const base = pageThrough(scanAndSort);
if (index.ids.join() !== base.ids.join()) throw new Error('the index and the scan answered different jobs');
console.log(`index: ${index.jobs} jobs in pages of ${PAGE}, ${index.ms.toFixed(0)} ms (slowest page ${index.slowest.toFixed(1)} ms: the first, which builds the index)`);
console.log(`baseline, scan and sort per page: ${base.ms.toFixed(0)} ms (slowest page ${base.slowest.toFixed(1)} ms)`);
console.log(`ratio (no floor): baseline time ÷ index time ${(base.ms / index.ms).toFixed(1)}×`);
