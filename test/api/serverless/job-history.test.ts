// GET /v2/serverless/{id}/jobs against a real control plane (docs/serverless.md, "Job history"), on
// the embedded queue and, in the PostgreSQL slice (.ci/postgres-slice.txt), on the PostgreSQL queue:
// jobs in every status (driven through the queue's own take/complete/cancel), newest first; the
// status filter; cursor paging that neither repeats nor skips a job when a new one arrives between
// pages; bodies only with ?include; a job whose result expired (?ttl) leaves the history; another
// account's endpoint is 404 and its jobs never show; bad parameters are 400 problem+json; client/'s
// EndpointsApi.jobs.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiClient, EndpointsApi } from '../../../client/index.ts';
import type { JobHistoryItem, JobHistoryPage } from '../../../model/index.ts';
import { startJobWorld, type JobWorld } from '../jobs/in-process-workers.ts';

type Item = JobHistoryItem;
type Page = JobHistoryPage;

let world: JobWorld;
let ep: string;
/** job ids by what happened to them, in the order they were sent */
const sent: { id: string; status: string }[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function run(endpointId: string, input: unknown, key = world.user.key): Promise<string> {
  const res = await world.cp.api(`/v2/${endpointId}/run`, { method: 'POST', key, json: { input } });
  expect(res.status).toBe(200);
  await sleep(3); // a distinct createdAt for each job: "newest first" is then the order they were sent in reverse
  return ((await res.json()) as { id: string }).id;
}

async function list(query = '', endpointId = ep, key = world.user.key): Promise<Page> {
  const res = await world.cp.api(`/v2/serverless/${endpointId}/jobs${query}`, { key });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Page;
}

beforeAll(async () => {
  world = await startJobWorld();
  ep = await world.newEndpoint();
  const q = world.cp.services.jobQueue;
  const take = async () => (await q.take(ep, 'w-hist', { waitMs: 5000 }))[0]!;
  // COMPLETED, FAILED, CANCELLED (queued), IN_PROGRESS, IN_QUEUE, in that order
  const done = await run(ep, { n: 'done' });
  expect((await take()).id).toBe(done);
  await q.complete(done, 'w-hist', { output: { text: 'hello' } });
  sent.push({ id: done, status: 'COMPLETED' });
  const failed = await run(ep, { n: 'fail' });
  expect((await take()).id).toBe(failed);
  await q.complete(failed, 'w-hist', { error: 'ValueError: no' });
  sent.push({ id: failed, status: 'FAILED' });
  const cancelled = await run(ep, { n: 'cancel' });
  expect((await world.cp.api(`/v2/${ep}/cancel/${cancelled}`, { method: 'POST', key: world.user.key })).status).toBe(200);
  sent.push({ id: cancelled, status: 'CANCELLED' });
  const running = await run(ep, { n: 'run' });
  expect((await take()).id).toBe(running);
  sent.push({ id: running, status: 'IN_PROGRESS' });
  const queued = await run(ep, { n: 'queue' });
  sent.push({ id: queued, status: 'IN_QUEUE' });
});
afterAll(async () => world?.close());

describe('GET /v2/serverless/{id}/jobs', () => {
  test('every held job of the endpoint, newest first, with status, times and durations and no bodies', async () => {
    const page = await list();
    expect(page.jobs.map((j) => [j.id, j.status])).toEqual([...sent].reverse().map((s) => [s.id, s.status]));
    expect(page.nextCursor).toBeNull();
    const byStatus = Object.fromEntries(page.jobs.map((j) => [j.status, j]));
    const completed = byStatus.COMPLETED!;
    expect(Date.parse(completed.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(completed).toMatchObject({ workerId: 'w-hist', retries: 0, sync: false });
    expect(completed.delayTime).toBeGreaterThanOrEqual(0);
    expect(completed.executionTime).toBeGreaterThanOrEqual(0);
    expect(Date.parse(completed.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(completed.startedAt!));
    expect(byStatus.IN_QUEUE!.startedAt).toBeUndefined();
    expect(byStatus.IN_PROGRESS!.finishedAt).toBeUndefined();
    for (const j of page.jobs) {
      expect(j).not.toHaveProperty('input');
      expect(j).not.toHaveProperty('output');
      expect(j).not.toHaveProperty('error');
    }
  });

  test('?include=input,output,error adds the bodies', async () => {
    const page = await list('?include=input,output,error');
    const byStatus = Object.fromEntries(page.jobs.map((j) => [j.status, j]));
    expect(byStatus.COMPLETED).toMatchObject({ input: { n: 'done' }, output: { text: 'hello' } });
    expect(byStatus.FAILED).toMatchObject({ input: { n: 'fail' }, error: 'ValueError: no' });
    expect(byStatus.IN_QUEUE).toMatchObject({ input: { n: 'queue' } });
    expect((await list('?include=output')).jobs.find((j) => j.status === 'COMPLETED')).not.toHaveProperty('input');
  });

  test('?status filters, as a comma list or repeated', async () => {
    const want = sent.filter((s) => s.status === 'FAILED' || s.status === 'CANCELLED').reverse().map((s) => s.id);
    expect((await list('?status=FAILED,CANCELLED')).jobs.map((j) => j.id)).toEqual(want);
    expect((await list('?status=CANCELLED&status=FAILED')).jobs.map((j) => j.id)).toEqual(want);
    expect((await list('?status=TIMED_OUT')).jobs).toEqual([]);
  });

  test('cursor paging: pages of ?limit in order, none repeated or skipped, a job sent between pages is not in the later ones', async () => {
    const first = await list('?limit=2');
    expect(first.jobs).toHaveLength(2);
    expect(first.nextCursor).toEqual(expect.any(String));
    const newer = await run(ep, { n: 'between pages' });
    const seen = [...first.jobs];
    let cursor = first.nextCursor;
    while (cursor) {
      const p = await list(`?limit=2&cursor=${encodeURIComponent(cursor)}`);
      expect(p.jobs.length).toBeGreaterThan(0);
      seen.push(...p.jobs);
      cursor = p.nextCursor;
    }
    expect(seen.map((j) => j.id)).toEqual([...sent].reverse().map((s) => s.id));
    // the next walk from the top starts with it
    expect((await list('?limit=1')).jobs[0]!.id).toBe(newer);
    // the filter holds across pages
    const f1 = await list('?status=COMPLETED,FAILED,CANCELLED&limit=2');
    const f2 = await list(`?status=COMPLETED,FAILED,CANCELLED&limit=2&cursor=${encodeURIComponent(f1.nextCursor!)}`);
    expect([...f1.jobs, ...f2.jobs].map((j) => j.status)).toEqual(['CANCELLED', 'FAILED', 'COMPLETED']);
    expect(f2.nextCursor).toBeNull();
    await world.cp.api(`/v2/${ep}/cancel/${newer}`, { method: 'POST', key: world.user.key });
  });

  test('a final job whose result has expired (?ttl on status) leaves the history', async () => {
    const e = await world.newEndpoint();
    const id = await run(e, { n: 'short' });
    expect((await world.cp.api(`/v2/${e}/cancel/${id}`, { method: 'POST', key: world.user.key })).status).toBe(200);
    expect((await list('', e)).jobs.map((j) => j.id)).toEqual([id]);
    expect((await world.cp.api(`/v2/${e}/status/${id}?ttl=1000`, { key: world.user.key })).status).toBe(200);
    await sleep(1300);
    expect((await list('', e)).jobs).toEqual([]);
  });

  test("another account: its endpoint is 404 to us, ours is 404 to it, and no job of one shows in the other's", async () => {
    const other = await world.cp.newAccount('read_write', 10);
    const theirs = await world.newEndpoint(other.key);
    const theirJob = await run(theirs, { n: 'theirs' }, other.key);
    const refused = await world.cp.api(`/v2/serverless/${theirs}/jobs`, { key: world.user.key });
    expect(refused.status).toBe(404);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await refused.json()) as { code: string }).code).toBe('NOT_FOUND');
    expect((await world.cp.api(`/v2/serverless/${ep}/jobs`, { key: other.key })).status).toBe(404);
    expect((await world.cp.api('/v2/serverless/ep-nope/jobs', { key: world.user.key })).status).toBe(404);
    expect((await list('', theirs, other.key)).jobs.map((j) => j.id)).toEqual([theirJob]);
    expect((await list()).jobs.map((j) => j.id)).not.toContain(theirJob);
    expect((await fetch(`${world.cp.url}/v2/serverless/${ep}/jobs`)).status).toBe(401);
  });

  test('a read key of the account may list', async () => {
    const { key } = await world.cp.services.keys.createKey({ accountId: world.user.accountId, name: 'reader', scope: 'read' });
    expect((await list('?limit=1', ep, key)).jobs).toHaveLength(1);
  });

  test.each([
    ['?limit=0', 'limit'],
    ['?limit=101', 'limit'],
    ['?limit=ten', 'limit'],
    ['?limit=1&limit=2', 'limit'],
    ['?status=DONE', 'status'],
    ['?status=THROTTLED', 'status'],
    ['?status=', 'status'],
    ['?status=FAILED,', 'status'],
    ['?cursor=not-a-cursor', 'cursor'],
    [`?cursor=${Buffer.from(JSON.stringify([1, '--oops; drop'])).toString('base64url')}`, 'cursor'],
    [`?cursor=${Buffer.from(JSON.stringify({ createdAt: 1 })).toString('base64url')}`, 'cursor'],
    ['?cursor=a&cursor=b', 'cursor'],
    ['?include=secrets', 'include'],
    ['?sort=asc', 'sort'],
  ])('%s is 400 problem+json naming $.%s, and lists nothing', async (query, field) => {
    const res = await world.cp.api(`/v2/serverless/${ep}/jobs${query}`, { key: world.user.key });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = (await res.json()) as { code: string; errors: string[]; detail: string };
    expect(body.code).toBe('BAD_REQUEST');
    expect(body.errors.some((e) => e.startsWith(`$.${field}:`)), JSON.stringify(body)).toBe(true);
    expect(body).not.toHaveProperty('jobs');
  });

  test("client/: EndpointsApi.jobs pages with status and include", async () => {
    const api = new EndpointsApi(new ApiClient({ url: world.cp.url, apiKey: world.user.key }));
    const p = await api.jobs(ep, { status: ['COMPLETED', 'FAILED'], include: ['error'], limit: 1 });
    expect(p.jobs.map((j) => [j.status, j.error])).toEqual([['FAILED', 'ValueError: no']]);
    const p2 = await api.jobs(ep, { status: ['COMPLETED', 'FAILED'], cursor: p.nextCursor! });
    expect(p2.jobs.map((j) => j.status)).toEqual(['COMPLETED']);
    expect(p2.nextCursor).toBeNull();
  });
});
