// An endpoint's job history (`GET /v2/serverless/{id}/jobs?status=&limit=&cursor=&include=`, our
// extension; docs/serverless.md, "Job history"): the query's checks (400 BAD_REQUEST with `errors`,
// as the job interface answers a bad `?wait`), the opaque cursor, and the view of one job: ids,
// status, times and durations, and its input, output or error only when asked for.
import { GpufleetError, JOB_STATUSES, type Job, type JobHistoryItem, type JobHistoryPage, type JobStatus } from '../../model/index.ts';
import type { JobListCursor } from '../../store/index.ts';

export const JOB_HISTORY_LIMIT = { default: 20, max: 100 } as const;
export const JOB_HISTORY_INCLUDES = ['input', 'output', 'error'] as const;
export type JobHistoryInclude = (typeof JOB_HISTORY_INCLUDES)[number];

export interface JobHistoryQuery {
  statuses?: JobStatus[];
  limit: number;
  after?: JobListCursor;
  include: ReadonlySet<JobHistoryInclude>;
}

const bad = (field: string, why: string): GpufleetError =>
  new GpufleetError('BAD_REQUEST', `${field} is invalid: ${why}`, { errors: [`$.${field}: ${why}`] });

/** one value or a comma list, possibly repeated (`status=A,B` or `status=A&status=B`) */
function listOf(field: string, raw: unknown): string[] {
  const parts = (Array.isArray(raw) ? raw : [raw]).map((v) => {
    if (typeof v !== 'string') throw bad(field, 'must be text');
    return v;
  });
  const words = parts.flatMap((p) => p.split(',')).map((w) => w.trim());
  if (!words.length || words.some((w) => !w)) throw bad(field, 'must not be empty');
  return [...new Set(words)];
}

const CURSOR_ID = /^[A-Za-z0-9_-]{1,128}$/;

export function encodeJobCursor(c: JobListCursor): string {
  return Buffer.from(JSON.stringify([c.createdAt, c.id]), 'utf8').toString('base64url');
}

export function decodeJobCursor(raw: string): JobListCursor {
  const why = 'not a cursor this route gave (pass nextCursor as it came)';
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(raw)) throw bad('cursor', why);
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw bad('cursor', why);
  }
  if (!Array.isArray(v) || v.length !== 2 || !Number.isSafeInteger(v[0]) || (v[0] as number) < 0 || typeof v[1] !== 'string' || !CURSOR_ID.test(v[1]))
    throw bad('cursor', why);
  return { createdAt: v[0] as number, id: v[1] };
}

/** the route's query, checked: unknown or repeated parameters, a status that is none, a limit out of range, a cursor it did not give are 400 */
export function parseJobHistoryQuery(query: Record<string, unknown>): JobHistoryQuery {
  const unknown = Object.keys(query).filter((k) => !['status', 'limit', 'cursor', 'include'].includes(k));
  if (unknown.length)
    throw new GpufleetError('BAD_REQUEST', `Unknown query parameter(s): ${unknown.join(', ')}`, { errors: unknown.map((k) => `$.${k}: unknown query parameter`) });
  const out: JobHistoryQuery = { limit: JOB_HISTORY_LIMIT.default, include: new Set() };
  if (query.status !== undefined) {
    const words = listOf('status', query.status);
    const wrong = words.filter((w) => !(JOB_STATUSES as readonly string[]).includes(w));
    if (wrong.length) throw bad('status', `${wrong.join(', ')}: must be one or more of ${JOB_STATUSES.join(', ')}`);
    out.statuses = words as JobStatus[];
  }
  if (query.limit !== undefined) {
    const raw = query.limit;
    const n = typeof raw === 'string' && /^\d{1,4}$/.test(raw) ? Number(raw) : Number.NaN;
    if (!(n >= 1 && n <= JOB_HISTORY_LIMIT.max)) throw bad('limit', `must be an integer from 1 to ${JOB_HISTORY_LIMIT.max}`);
    out.limit = n;
  }
  if (query.cursor !== undefined) {
    if (typeof query.cursor !== 'string') throw bad('cursor', 'give it once');
    out.after = decodeJobCursor(query.cursor);
  }
  if (query.include !== undefined) {
    const words = listOf('include', query.include);
    const wrong = words.filter((w) => !(JOB_HISTORY_INCLUDES as readonly string[]).includes(w));
    if (wrong.length) throw bad('include', `${wrong.join(', ')}: must be one or more of ${JOB_HISTORY_INCLUDES.join(', ')}`);
    out.include = new Set(words as JobHistoryInclude[]);
  }
  return out;
}

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

export function toJobHistoryItem(job: Job, include: ReadonlySet<JobHistoryInclude>): JobHistoryItem {
  const v: JobHistoryItem = { id: job.id, status: job.status, createdAt: iso(job.createdAt)!, queuedAt: iso(job.queuedAt)!, retries: job.retries, sync: job.sync };
  if (job.startedAt !== undefined) v.startedAt = iso(job.startedAt)!;
  if (job.finishedAt !== undefined) v.finishedAt = iso(job.finishedAt)!;
  if (job.delayTime !== undefined) v.delayTime = job.delayTime;
  if (job.executionTime !== undefined) v.executionTime = job.executionTime;
  if (job.workerId !== undefined) v.workerId = job.workerId;
  if (include.has('input')) v.input = job.input;
  if (include.has('output') && job.output !== undefined) v.output = job.output;
  if (include.has('error') && job.error !== undefined) v.error = job.error;
  return v;
}

/** a page one past the limit was asked for: the extra job only says that there is a next page */
export function jobHistoryPage(jobs: Job[], q: JobHistoryQuery): JobHistoryPage {
  const page = jobs.slice(0, q.limit);
  const last = page[page.length - 1];
  return {
    jobs: page.map((j) => toJobHistoryItem(j, q.include)),
    nextCursor: jobs.length > q.limit && last ? encodeJobCursor({ createdAt: last.createdAt, id: last.id }) : null,
  };
}
