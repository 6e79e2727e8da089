// A page of an endpoint's job history (`GET /v2/serverless/{id}/jobs`, the console's Requests tab
// reads the first page every 3 s) on the embedded queue's table: JobTable.listJobs (one pass keeping
// the page's newest jobs in order) against a scan that sorts every retained job of the endpoint per
// page, which is the baseline here, run on the same table in the same process. N jobs (default
// 100,000: a busy endpoint's 30 minutes of retention), all of one account, pages of 21 (the route asks
// limit + 1); the first page 50 times, then a walk of 20 pages with the cursor. No floor: the printed
// ratio is the baseline's time ÷ listJobs'.
//   npx tsx bench/job-history.ts
import { JobTable } from '../core/index.ts';
import type { Job } from '../model/index.ts';
import type { JobListCursor } from '../store/index.ts';

const N = Number(process.env.N ?? 100_000);
const LIMIT = 21;
const now = Date.now();
const table = new JobTable({ leaseMs: 60_000, retention: { asyncMs: 30 * 60_000, syncMs: 60_000 } });
for (let i = 0; i < N; i++) {
  const id = `job-${String(i).padStart(7, '0')}`;
  table.apply({ t: 'enq', job: { id, endpointId: 'ep', accountId: 'a', input: {}, policy: { executionTimeout: 600_000, ttl: 86_400_000, lowPriority: false }, sync: false, createdAt: now - N + Math.floor(i / 3) } });
  if (i % 4 !== 0) {
    table.apply({ t: 'take', id, worker: 'w', at: now });
    table.apply({ t: 'fin', id, at: now, status: i % 4 === 3 ? 'FAILED' : 'COMPLETED', output: { ok: true } });
  }
}

const newer = (a: JobListCursor, b: JobListCursor) => a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id);
/** the baseline: every retained job of the endpoint scanned, those after the cursor sorted, per page */
function scanAndSort(after: JobListCursor | undefined, limit: number): Job[] {
  const out: Job[] = [];
  for (const id of table.byEndpoint.get('ep') ?? []) {
    const job = table.find(id, now);
    if (job && job.accountId === 'a' && (!after || newer(after, job))) out.push(job);
  }
  return out.sort((x, y) => (newer(x, y) ? -1 : 1)).slice(0, limit);
}
const listJobs = (after: JobListCursor | undefined, limit: number) => table.listJobs({ endpointId: 'ep', accountId: 'a', limit, ...(after ? { after } : {}) }, now);

function time(page: (after: JobListCursor | undefined, limit: number) => Job[]): { firstMs: number; walkMs: number; ids: string[] } {
  const t0 = performance.now();
  for (let i = 0; i < 50; i++) page(undefined, LIMIT);
  const firstMs = (performance.now() - t0) / 50;
  const ids: string[] = [];
  const t1 = performance.now();
  let after: JobListCursor | undefined;
  for (let p = 0; p < 20; p++) {
    const got = page(after, LIMIT);
    ids.push(...got.map((j) => j.id));
    after = { createdAt: got.at(-1)!.createdAt, id: got.at(-1)!.id };
  }
  return { firstMs, walkMs: performance.now() - t1, ids };
}

const base = time(scanAndSort);
const list = time(listJobs);
if (base.ids.join() !== list.ids.join()) throw new Error('listJobs and the scan answered different pages');
console.log(`${N} retained jobs of one endpoint, pages of ${LIMIT}`);
console.log(`listJobs: first page ${list.firstMs.toFixed(2)} ms; 20 pages walked ${list.walkMs.toFixed(0)} ms`);
console.log(`baseline, scan and sort per page: first page ${base.firstMs.toFixed(2)} ms; 20 pages walked ${base.walkMs.toFixed(0)} ms`);
console.log(`ratio (no floor): baseline time ÷ listJobs time, first page ${(base.firstMs / list.firstMs).toFixed(1)}×, walk ${(base.walkMs / list.walkMs).toFixed(1)}×`);
