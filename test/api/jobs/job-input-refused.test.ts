// Bad requests to the job interface are refused with problem+json 4xx and change nothing: a missing
// or null `input`, an unknown field, a body over 10 MiB (run) or 20 MiB (runsync), a bad `wait` or
// `ttl`, an unknown job, another account's endpoint or job, a LOAD_BALANCER endpoint, used-up
// credits. Also: the key works bare (`Authorization: <key>`) on job routes only, and job requests
// count against the caller's rate limits.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { startJobWorld, type JobWorld } from './in-process-workers.ts';

let world: JobWorld;
let cp: TestControlPlane;
let endpointId: string;
/** another account, with its own endpoint and a job queued there */
let other: { key: string; endpointId: string; jobId: string };

beforeAll(async () => {
  world = await startJobWorld({ rateLimits: 'minute=100000,hour=100000,day=100000' });
  cp = world.cp;
  endpointId = await world.newEndpoint(); // no worker: jobs stay queued
  const o = await cp.newAccount('read_write', 100);
  const oe = await world.newEndpoint(o.key);
  const run = await job('POST', `/v2/${oe}/run`, { input: { theirs: true } }, o.key);
  other = { key: o.key, endpointId: oe, jobId: ((await run.json()) as { id: string }).id };
});
afterAll(async () => world?.close());

function job(method: string, path: string, body?: unknown, key: string = world.user.key, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(cp.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
}

async function problem(res: Response, status: number, code?: string): Promise<{ detail: string; errors?: string[]; code: string }> {
  const text = await res.text();
  expect(res.status, text.slice(0, 300)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const p = JSON.parse(text) as { title: string; status: number; detail: string; errors?: string[]; code: string };
  expect(p.status).toBe(status);
  expect(typeof p.title).toBe('string');
  if (code) expect(p.code).toBe(code);
  return p;
}

async function counts(id = endpointId, key = world.user.key) {
  return ((await (await job('GET', `/v2/${id}/health`, undefined, key)).json()) as { jobs: Record<string, number> }).jobs;
}

describe('refused bodies change nothing', () => {
  test('missing input, null input, an unknown field, a bad policy: 422 with the JSON path', async () => {
    const before = await counts();
    for (const [body, path] of [
      [{}, '$.input: is required'],
      [{ input: null }, '$.input'],
      [{ input: {}, webhookV3: 'x' }, '$.webhookV3: unknown property'],
      [{ input: {}, policy: { executionTimeout: 10 } }, '$.policy.executionTimeout'],
      [{ input: {}, policy: { ttl: 604_800_001 } }, '$.policy.ttl'],
      [[1, 2], '$'],
    ] as const) {
      for (const route of ['run', 'runsync']) {
        const p = await problem(await job('POST', `/v2/${endpointId}/${route}`, body), 422, 'VALIDATION_FAILED');
        expect(p.errors?.join('\n'), JSON.stringify(body)).toContain(path);
      }
    }
    expect(await counts()).toEqual(before);
  });

  test('an empty body or one that is not JSON: 400; not labelled JSON: 415', async () => {
    await problem(await job('POST', `/v2/${endpointId}/run`, '', undefined, { 'content-type': 'application/json' }), 422);
    await problem(await job('POST', `/v2/${endpointId}/run`, '{"input":', undefined, { 'content-type': 'application/json' }), 400, 'INVALID_JSON');
    await problem(await job('POST', `/v2/${endpointId}/run`, 'input=1', undefined, { 'content-type': 'application/x-www-form-urlencoded' }), 415);
    expect((await counts()).inQueue).toBe(0);
  });

  test('over 10 MiB on run and 20 MiB on runsync: 413 naming the limit; 15 MiB on runsync is taken', async () => {
    const pad = (n: number) => JSON.stringify({ input: { pad: 'x'.repeat(n) } });
    const p = await problem(await job('POST', `/v2/${endpointId}/run`, pad(10 * 2 ** 20)), 413, 'PAYLOAD_TOO_LARGE');
    expect(p.detail).toContain('10 MiB');
    expect((await problem(await job('POST', `/v2/${endpointId}/runsync`, pad(20 * 2 ** 20)), 413)).detail).toContain('20 MiB');
    expect((await counts()).inQueue).toBe(0);
    const big = await job('POST', `/v2/${endpointId}/runsync?wait=1000`, pad(15 * 2 ** 20));
    expect(big.status).toBe(200);
    expect(((await big.json()) as { status: string }).status).toBe('IN_QUEUE');
    await job('POST', `/v2/${endpointId}/purge-queue`);
  });

  test('wait outside 1000..300000 (or not a number): 400 with the public wording, nothing queued', async () => {
    for (const wait of ['0', '999', '300001', 'abc', '1e4', '-5']) {
      const p = await problem(await job('POST', `/v2/${endpointId}/runsync?wait=${wait}`, { input: {} }), 400, 'BAD_REQUEST');
      expect(p.detail).toBe('wait is invalid; must be between 1000 and 300000');
    }
    const queued = ((await (await job('POST', `/v2/${endpointId}/run`, { input: {} })).json()) as { id: string }).id;
    await problem(await job('GET', `/v2/${endpointId}/status-sync/${queued}?wait=5`), 400, 'BAD_REQUEST');
    await problem(await job('GET', `/v2/${endpointId}/status/${queued}?ttl=10`), 400, 'BAD_REQUEST');
    expect((await counts()).inQueue).toBe(1);
    await job('POST', `/v2/${endpointId}/purge-queue`);
  });
});

describe('more refusals that change nothing', () => {
  test('an unknown field inside policy, or a policy that is not an object: 422 with the path', async () => {
    const before = await counts();
    for (const [policy, path] of [
      [{ executionTimeout: 10_000, retries: 3 }, '$.policy.retries: unknown property'],
      ['fast', '$.policy'],
      [{ lowPriority: 'yes' }, '$.policy.lowPriority'],
    ] as const) {
      const p = await problem(await job('POST', `/v2/${endpointId}/run`, { input: {}, policy }), 422, 'VALIDATION_FAILED');
      expect(p.errors?.join('\n')).toContain(path);
    }
    expect(await counts()).toEqual(before);
  });

  test('a body over 10 MiB sent chunked (no content-length) is 413 too, and nothing is queued', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(1 << 20));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent === 0) c.enqueue(new TextEncoder().encode('{"input":{"pad":"'));
        if (sent++ < 11) c.enqueue(chunk);
        else {
          c.enqueue(new TextEncoder().encode('"}}'));
          c.close();
        }
      },
    });
    const res = await fetch(`${cp.url}/v2/${endpointId}/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.user.key}`, 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    await problem(res, 413, 'PAYLOAD_TOO_LARGE');
    expect((await counts()).inQueue).toBe(0);
  });

  test('cancel of a final job and retry of a job that is not FAILED or TIMED_OUT: 409 INVALID_TRANSITION, the job as it was', async () => {
    const id = ((await (await job('POST', `/v2/${endpointId}/run`, { input: { q: 1 } })).json()) as { id: string }).id;
    await problem(await job('POST', `/v2/${endpointId}/retry/${id}`), 409, 'INVALID_TRANSITION');
    expect(((await (await job('GET', `/v2/${endpointId}/status/${id}`)).json()) as { status: string }).status).toBe('IN_QUEUE');
    expect(((await (await job('POST', `/v2/${endpointId}/cancel/${id}`)).json()) as { status: string }).status).toBe('CANCELLED');
    // cancelling it again answers the same; retrying a cancelled job is refused
    expect(((await (await job('POST', `/v2/${endpointId}/cancel/${id}`)).json()) as { status: string }).status).toBe('CANCELLED');
    await problem(await job('POST', `/v2/${endpointId}/retry/${id}`), 409, 'INVALID_TRANSITION');
    expect(((await (await job('GET', `/v2/${endpointId}/status/${id}`)).json()) as { status: string }).status).toBe('CANCELLED');
  });
});

describe('what the caller may not see is 404', () => {
  test('an unknown job on every job route', async () => {
    for (const [m, r] of [['GET', 'status'], ['GET', 'status-sync'], ['GET', 'stream'], ['POST', 'cancel'], ['POST', 'retry']] as const)
      await problem(await job(m, `/v2/${endpointId}/${r}/no-such-job`), 404, 'NOT_FOUND');
  });

  test("another account's endpoint, on every job route; its job is untouched", async () => {
    const ep = other.endpointId;
    await problem(await job('POST', `/v2/${ep}/run`, { input: {} }), 404);
    await problem(await job('POST', `/v2/${ep}/runsync`, { input: {} }), 404);
    await problem(await job('GET', `/v2/${ep}/health`), 404);
    await problem(await job('POST', `/v2/${ep}/purge-queue`), 404);
    for (const [m, r] of [['GET', 'status'], ['GET', 'status-sync'], ['GET', 'stream'], ['POST', 'cancel'], ['POST', 'retry']] as const)
      await problem(await job(m, `/v2/${ep}/${r}/${other.jobId}`), 404);
    expect(await counts(ep, other.key)).toMatchObject({ inQueue: 1 });
    const s = await job('GET', `/v2/${ep}/status/${other.jobId}`, undefined, other.key);
    expect(((await s.json()) as { status: string }).status).toBe('IN_QUEUE');
  });

  test('an endpoint that does not exist, on every route: 404', async () => {
    const ep = 'nosuchendpoint';
    await problem(await job('POST', `/v2/${ep}/run`, { input: {} }), 404, 'NOT_FOUND');
    await problem(await job('POST', `/v2/${ep}/runsync`, { input: {} }), 404, 'NOT_FOUND');
    await problem(await job('GET', `/v2/${ep}/health`), 404, 'NOT_FOUND');
    await problem(await job('POST', `/v2/${ep}/purge-queue`), 404, 'NOT_FOUND');
    for (const [m, r] of [['GET', 'status'], ['GET', 'status-sync'], ['GET', 'stream'], ['POST', 'cancel'], ['POST', 'retry']] as const)
      await problem(await job(m, `/v2/${ep}/${r}/${other.jobId}`), 404, 'NOT_FOUND');
  });

  test("another account's job through one's own endpoint: 404", async () => {
    for (const [m, r] of [['GET', 'status'], ['POST', 'cancel'], ['GET', 'stream']] as const)
      await problem(await job(m, `/v2/${endpointId}/${r}/${other.jobId}`), 404);
  });

  test('a LOAD_BALANCER endpoint is not served by the job interface: 400', async () => {
    const lb = await world.newEndpoint(world.user.key, { type: 'LOAD_BALANCER' });
    const p = await problem(await job('POST', `/v2/${lb}/run`, { input: {} }), 400, 'BAD_REQUEST');
    expect(p.detail).toContain('QUEUE');
  });
});

describe('credits (spec 5.6)', () => {
  test('an account whose credits are used up is refused with 402 CREDITS_EXHAUSTED and nothing is queued', async () => {
    const broke = await cp.newAccount('read_write', 0);
    const ep = await world.newEndpoint(broke.key);
    for (const route of ['run', 'runsync']) {
      const p = await problem(await job('POST', `/v2/${ep}/${route}`, { input: {} }, broke.key), 402, 'CREDITS_EXHAUSTED');
      expect(p.detail).toMatch(/credits are used up/);
    }
    expect(await counts(ep, broke.key)).toMatchObject({ inQueue: 0 });
    // reads still answer
    expect((await job('GET', `/v2/${ep}/health`, undefined, broke.key)).status).toBe(200);
  });
});

describe('keys on the job interface', () => {
  test('the bare key (the public docs\' curl) authenticates job routes, not the rest of the API', async () => {
    const bare = { authorization: world.user.key };
    const h = await fetch(`${cp.url}/v2/${endpointId}/health`, { headers: bare });
    expect(h.status).toBe(200);
    const r = await fetch(`${cp.url}/v2/${endpointId}/run`, { method: 'POST', headers: { ...bare, 'content-type': 'application/json' }, body: '{"input":{}}' });
    expect(r.status).toBe(200);
    await problem(await fetch(`${cp.url}/v2/pods`, { headers: bare }), 401, 'UNAUTHENTICATED');
    await problem(await fetch(`${cp.url}/v2/${endpointId}/health`, { headers: { authorization: 'Basic dXNlcjpwYXNz' } }), 401);
    await problem(await fetch(`${cp.url}/v2/${endpointId}/health`, { headers: { authorization: 'gf_not_a_real_key_0123456789' } }), 401);
    await job('POST', `/v2/${endpointId}/purge-queue`);
  });

  test('a read key may read jobs but not submit them: 403', async () => {
    const { key: reader } = await cp.services.keys.createKey({ accountId: world.user.accountId, name: 'reader', scope: 'read' });
    await problem(await job('POST', `/v2/${endpointId}/run`, { input: {} }, reader), 403, 'FORBIDDEN');
    expect((await job('GET', `/v2/${endpointId}/health`, undefined, reader)).status).toBe(200);
  });
});

describe('rate limits', () => {
  let small: TestControlPlane;
  beforeAll(async () => {
    small = await startTestControlPlane({ rateLimits: 'minute=3,hour=1000,day=1000' });
  });
  afterAll(async () => small?.close());

  test('job requests count against the caller\'s windows like every route: the fourth in a minute is 429', async () => {
    const acct = await small.newAccount('read_write');
    const health = () => fetch(`${small.url}/v2/nosuchendpoint1/health`, { headers: { authorization: `Bearer ${acct.key}` } });
    let first = await health();
    const seconds = Number(/"minute";r=\d+;t=(\d+)/.exec(first.headers.get('ratelimit') ?? '')?.[1]);
    if (seconds < 10) {
      // too close to the end of the minute: start again in a fresh window
      await new Promise((r) => setTimeout(r, (seconds + 1) * 1000));
      first = await health();
    }
    const res = [first, await health(), await health(), await health()];
    expect(res.slice(0, 3).map((r) => r.status)).toEqual([404, 404, 404]);
    expect(res[3]!.status).toBe(429);
    expect(res[3]!.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});
