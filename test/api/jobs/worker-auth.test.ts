// A worker's token (RUNPOD_AI_API_KEY in its container) can do nothing but that worker's protocol
// calls: no header, a user's API key (Bearer or bare), another worker's token, the right token on
// another endpoint or worker path, a recycled worker's token, a deleted endpoint's worker → 401/403,
// and nothing happens. Worker calls are not counted against the account's rate limits.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startJobWorld, type JobWorld } from './in-process-workers.ts';

let world: JobWorld;
let endpointId: string;
let otherEndpointId: string;
let a: { workerId: string; token: string };
let b: { workerId: string; token: string };

beforeAll(async () => {
  world = await startJobWorld({ config: { workerPollMs: 300 } });
  endpointId = await world.newEndpoint();
  otherEndpointId = await world.newEndpoint();
  a = await world.directory.issue(endpointId);
  b = await world.directory.issue(otherEndpointId);
});
afterAll(async () => world?.close());

const url = (ep: string, path: string) => `${world.cp.url}/v2/${ep}${path}`;
const routes = (workerId: string): [string, string][] => [
  ['GET', `/job-take/${workerId}?job_in_progress=0`],
  ['GET', `/job-take-batch/${workerId}?batch_size=2`],
  ['GET', `/job-stop/${workerId}`],
  ['GET', `/ping/${workerId}`],
  ['POST', `/job-done/${workerId}/some-job?isStream=false`],
  ['POST', `/job-stream/${workerId}/some-job?isStream=false`],
];
function send(method: string, target: string, authorization?: string): Promise<Response> {
  return fetch(target, {
    method,
    headers: { ...(authorization !== undefined ? { authorization } : {}), ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
    ...(method === 'POST' ? { body: '{"output":1}' } : {}),
  });
}

describe('who may call the worker protocol', () => {
  test('no header, a user API key (Bearer or bare, even the operator\'s), a garbage token: 401 on every worker route', async () => {
    for (const auth of [undefined, `Bearer ${world.user.key}`, world.user.key, `Bearer ${world.cp.adminKey}`, 'wt_not_a_worker_token_000000']) {
      for (const [m, p] of routes(a.workerId)) {
        const res = await send(m, url(endpointId, p), auth);
        expect(res.status, `${m} ${p} with ${auth?.slice(0, 12)}`).toBe(401);
        expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      }
    }
  });

  test("a worker's token on another worker's path, or on another endpoint's path: 403", async () => {
    for (const [m, p] of routes(b.workerId)) expect((await send(m, url(endpointId, p), a.token)).status, `${m} ${p}`).toBe(403);
    for (const [m, p] of routes(a.workerId)) expect((await send(m, url(otherEndpointId, p), a.token)).status, `${m} ${p}`).toBe(403);
  });

  test('the token taken with or without "Bearer" on its own paths', async () => {
    expect((await send('GET', url(endpointId, `/ping/${a.workerId}`), a.token)).status).toBe(200);
    expect((await send('GET', url(endpointId, `/ping/${a.workerId}`), `Bearer ${a.token}`)).status).toBe(200);
  });

  test('a worker token is not an API key: 401 on the job interface and the rest of the API', async () => {
    for (const [m, p] of [['GET', url(endpointId, '/health')], ['POST', url(endpointId, '/run')], ['GET', `${world.cp.url}/v2/pods`]] as const) {
      expect((await send(m, p, a.token)).status, p).toBe(401);
      expect((await send(m, p, `Bearer ${a.token}`)).status, p).toBe(401);
    }
  });

  test('a recycled worker, or a worker of a deleted endpoint, is refused from then on', async () => {
    const c = await world.directory.issue(endpointId);
    expect((await send('GET', url(endpointId, `/ping/${c.workerId}`), c.token)).status).toBe(200);
    await world.directory.recycle(c.workerId, 'test');
    expect((await send('GET', url(endpointId, `/ping/${c.workerId}`), c.token)).status).toBe(401);

    const gone = await world.newEndpoint();
    const d = await world.directory.issue(gone);
    expect((await send('GET', url(gone, `/ping/${d.workerId}`), d.token)).status).toBe(200);
    expect((await world.cp.api(`/v1/endpoints/${gone}`, { method: 'DELETE', key: world.user.key })).status).toBe(204);
    expect((await send('GET', url(gone, `/job-take/${d.workerId}?job_in_progress=0`), d.token)).status).toBe(401);
  });

  test("a refused worker call changes nothing: the job stays queued and untaken", async () => {
    const run = await world.cp.api(`/v2/${endpointId}/run`, { method: 'POST', key: world.user.key, json: { input: { keep: 1 } } });
    const { id } = (await run.json()) as { id: string };
    expect((await send('GET', url(endpointId, `/job-take/${a.workerId}?job_in_progress=0`), world.user.key)).status).toBe(401);
    expect((await send('GET', url(endpointId, `/job-take/${b.workerId}?job_in_progress=0`), b.token)).status).toBe(403);
    const s = (await (await world.cp.api(`/v2/${endpointId}/status/${id}`, { key: world.user.key })).json()) as { status: string };
    expect(s.status).toBe('IN_QUEUE');
    await world.cp.api(`/v2/${endpointId}/purge-queue`, { method: 'POST', key: world.user.key });
  });
});

describe('rate limits', () => {
  let small: JobWorld;
  beforeAll(async () => {
    small = await startJobWorld({ rateLimits: 'minute=4,hour=1000,day=1000', config: { workerPollMs: 300 } });
  });
  afterAll(async () => small?.close());

  test("a worker's calls are not counted against its account's windows (quota 4 a minute here)", async () => {
    const limited = await small.cp.newAccount('read_write', 100);
    const ep = await small.newEndpoint(limited.key);
    const w = await small.directory.issue(ep);
    const url = (e: string, path: string) => `${small.cp.url}/v2/${e}${path}`;
    // the account's first request of the window (plus the two newEndpoint made)
    const first = await fetch(url(ep, '/health'), { headers: { authorization: `Bearer ${limited.key}` } });
    const before = /"minute";r=(\d+)/.exec(first.headers.get('ratelimit') ?? '')?.[1];
    for (let i = 0; i < 12; i++) expect((await send('GET', url(ep, `/ping/${w.workerId}`), w.token)).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await send('GET', url(ep, `/job-take/${w.workerId}?job_in_progress=0`), w.token)).status).toBe(204);
    const after = await fetch(url(ep, '/health'), { headers: { authorization: `Bearer ${limited.key}` } });
    // the window may have turned over meanwhile; either way the worker's 15 calls did not spend it
    const left = Number(/"minute";r=(\d+)/.exec(after.headers.get('ratelimit') ?? '')?.[1]);
    expect(after.status, `RateLimit before ${before}, after ${after.headers.get('ratelimit')}`).toBe(200);
    expect(left).toBeGreaterThanOrEqual(0);
  });
});
