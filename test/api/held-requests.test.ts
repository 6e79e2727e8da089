// Long-held requests per account (issue 18, item 3; docs/security.md "Stream shares"): event streams
// and job waits (runsync, status-sync) are held open for as long as something may happen; an account
// holding its limit of one kind gets 429 HELD_REQUESTS with Retry-After for the next, other accounts
// and other kinds are not touched, and a closed request gives its place back. Against a listening
// server, with the requests really held open.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startJobWorld, type JobWorld } from './jobs/in-process-workers.ts';
import { readSse, type SseStream } from '../harness/sse-reader.ts';
import { waitFor } from '../harness/wait-for.ts';

let world: JobWorld;
const LIMITS = { events: 2, waits: 2, logs: 32, exec: 16 };

beforeAll(async () => {
  world = await startJobWorld({ rateLimits: 'minute=100000,hour=100000,day=100000', config: { heldRequests: LIMITS } });
});
afterAll(async () => world?.close());

const events = (key: string): Promise<SseStream> =>
  readSse(`${world.cp.url}/v2/events`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } });

async function expect429(status: number, contentType: string | null, retryAfter: string | null, text: string): Promise<void> {
  expect(status, text.slice(0, 300)).toBe(429);
  expect(contentType).toMatch(/^application\/problem\+json/);
  expect(Number(retryAfter)).toBeGreaterThan(0);
  expect(JSON.parse(text)).toMatchObject({ status: 429, code: 'HELD_REQUESTS' });
}

describe('long-held requests per account', () => {
  test('a third event stream of one account is 429 with Retry-After; another account still follows; a closed stream gives its place back', async () => {
    const a = world.user;
    const b = await world.cp.newAccount('read_write');
    const held = [await events(a.key), await events(a.key)];
    for (const s of held) expect(s.status).toBe(200);
    const third = await fetch(`${world.cp.url}/v2/events`, { headers: { authorization: `Bearer ${a.key}`, accept: 'text/event-stream' } });
    await expect429(third.status, third.headers.get('content-type'), third.headers.get('retry-after'), await third.text());
    // the list (no stream) is not a held request
    expect((await world.cp.api('/v2/events', { key: a.key })).status).toBe(200);
    const theirs = await events(b.key);
    expect(theirs.status).toBe(200);
    theirs.close();
    held[0]!.close();
    await waitFor('the closed stream given back', async () => world.cp.services.heldRequests.heldBy(a.accountId, 'events') === 1, 10_000, 50);
    const again = await events(a.key);
    expect(again.status).toBe(200);
    again.close();
    held[1]!.close();
  }, 30_000);

  test('runsync and status-sync waits: the third held wait of one account is 429, another account waits, an ended wait gives its place back', async () => {
    const endpointId = await world.newEndpoint(); // no worker: jobs stay queued, waits run their course
    const post = (path: string, body: unknown, key = world.user.key, signal?: AbortSignal) =>
      fetch(world.cp.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
    const queued = (await (await post(`/v2/${endpointId}/run`, { input: { n: 0 } })).json()) as { id: string };
    const stop = new AbortController();
    const waits = [
      post(`/v2/${endpointId}/runsync?wait=60000`, { input: { n: 1 } }, world.user.key, stop.signal).catch(() => null),
      fetch(`${world.cp.url}/v2/${endpointId}/status-sync/${queued.id}?wait=60000`, { headers: { authorization: `Bearer ${world.user.key}` }, signal: stop.signal }).catch(() => null),
    ];
    await waitFor('two waits held', async () => world.cp.services.heldRequests.heldBy(world.user.accountId, 'waits') === 2, 10_000, 50);
    const third = await post(`/v2/${endpointId}/runsync?wait=1000`, { input: { n: 2 } });
    await expect429(third.status, third.headers.get('content-type'), third.headers.get('retry-after'), await third.text());
    // a short status (not a wait) still answers
    expect((await fetch(`${world.cp.url}/v2/${endpointId}/status/${queued.id}`, { headers: { authorization: `Bearer ${world.user.key}` } })).status).toBe(200);
    // another account's wait is its own
    const other = await world.cp.newAccount('read_write', 100);
    const otherEndpoint = await world.newEndpoint(other.key);
    const theirs = await post(`/v2/${otherEndpoint}/runsync?wait=1000`, { input: {} }, other.key);
    expect(theirs.status).toBe(200);
    stop.abort();
    await Promise.all(waits);
    await waitFor('the waits given back', async () => world.cp.services.heldRequests.heldBy(world.user.accountId, 'waits') === 0, 10_000, 50);
    expect((await post(`/v2/${endpointId}/runsync?wait=1000`, { input: { n: 3 } })).status).toBe(200);
  }, 30_000);
});
