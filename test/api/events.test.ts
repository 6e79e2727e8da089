// Events (issue 13, spec part 6): every status change of a pod and a host, with time, reason and
// actor; GET /v2/events lists the caller's own (operators: hosts too), follows them live as
// server-sent events, and GET /v2/pods/{id} carries the last five. Through a listening server, hosts
// as store records (no provisioner: the status changes here are the users' and the operator's).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { EventLog } from '../../core/observability/events/event-log.ts';
import type { EventView } from '../../model/records/event.ts';
import { readSse } from '../harness/sse-reader.ts';

const UNLIMITED = 'minute=100000000,hour=100000000,day=100000000';
let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane({ rateLimits: UNLIMITED });
  await seedHosts(cp.services.store, [{ id: 'ev-gpu', gpus: 8, dataCenterId: 'dc-ev' }]);
});
afterAll(async () => cp?.close());

const json = async <T>(res: Response): Promise<T> => (await res.json()) as T;

async function newPod(key: string): Promise<string> {
  const res = await cp.api('/v2/pods', { key, method: 'POST', json: { name: `ev-${Math.random()}`, image: 'busybox:1.36', gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 }, disk: 5 } });
  expect(res.status).toBe(201);
  return (await json<{ id: string }>(res)).id;
}
const act = async (key: string, id: string, action: string) => {
  const res = await cp.api(`/v2/pods/${id}/action`, { key, method: 'POST', json: { action } });
  expect(res.status, `${action}: ${res.status}`).toBeLessThan(300);
};
const events = async (key: string, query: string) => cp.api(`/v2/events?${query}`, { key });

describe('pod events', () => {
  test('each status change of a pod is an event with time, reason and the acting key; the pod view carries the last five', async () => {
    const user = await cp.newAccount('read_write');
    const keyId = (await cp.services.keys.authenticate(`Bearer ${user.key}`)).keyId;
    const id = await newPod(user.key);
    for (const a of ['stop', 'start', 'stop', 'start', 'stop']) await act(user.key, id, a);
    const res = await events(user.key, `resourceId=${id}`);
    expect(res.status).toBe(200);
    const list = (await json<{ events: EventView[] }>(res)).events;
    expect(list.map((e) => [e.previousStatus, e.status])).toEqual([
      [null, 'PROVISIONING'],
      ['PROVISIONING', 'EXITED'],
      ['EXITED', 'PROVISIONING'],
      ['PROVISIONING', 'EXITED'],
      ['EXITED', 'PROVISIONING'],
      ['PROVISIONING', 'EXITED'],
    ]);
    for (const e of list) {
      expect(e).toMatchObject({ resourceType: 'pod', resourceId: id, actor: `user:${keyId}`, type: `pod.${e.status!.toLowerCase()}` });
      expect(Date.parse(e.time)).toBeGreaterThan(Date.now() - 60_000);
      expect(e.reason).toEqual(expect.any(String));
    }
    expect(list[1]!.reason).toBe('stopped by user');
    const pod = await json<{ events: EventView[] }>(await cp.api(`/v2/pods/${id}`, { key: user.key }));
    expect(pod.events).toEqual(list.slice(-5));
  });

  test("another account's pod is 404 and its events never show in the caller's list", async () => {
    const owner = await cp.newAccount('read_write');
    const other = await cp.newAccount('read_write');
    const id = await newPod(owner.key);
    expect((await events(other.key, `resourceId=${id}`)).status).toBe(404);
    expect((await events(other.key, 'resourceId=no-such-resource')).status).toBe(404);
    const mine = (await json<{ events: EventView[] }>(await events(other.key, ''))).events;
    expect(mine.filter((e) => e.resourceId === id)).toEqual([]);
    const theirs = (await json<{ events: EventView[] }>(await events(owner.key, ''))).events;
    expect(theirs.some((e) => e.resourceId === id)).toBe(true);
    expect(theirs.every((e) => e.resourceType === 'pod')).toBe(true);
  });

  test('since and limit narrow the list; bad values are 422', async () => {
    const user = await cp.newAccount('read_write');
    const id = await newPod(user.key);
    await new Promise((r) => setTimeout(r, 20));
    const cut = new Date().toISOString();
    await act(user.key, id, 'stop');
    await act(user.key, id, 'start');
    const after = (await json<{ events: EventView[] }>(await events(user.key, `resourceId=${id}&since=${cut}`))).events;
    expect(after.map((e) => e.status)).toEqual(['EXITED', 'PROVISIONING']);
    const last = (await json<{ events: EventView[] }>(await events(user.key, `resourceId=${id}&limit=1`))).events;
    expect(last.map((e) => e.status)).toEqual(['PROVISIONING']);
    for (const q of ['since=yesterday', 'limit=0', 'limit=abc', 'foo=1']) expect((await events(user.key, q)).status, q).toBe(422);
  });
});

describe('host events', () => {
  test('operators see host status changes by the operator; a tenant gets 404 for a host', async () => {
    const tenant = await cp.newAccount('admin');
    expect((await cp.api('/v2/hosts/ev-gpu/drain', { method: 'POST', json: { drained: true } })).status).toBe(200);
    expect((await cp.api('/v2/hosts/ev-gpu/drain', { method: 'POST', json: { drained: false } })).status).toBe(200);
    const list = (await json<{ events: EventView[] }>(await events(cp.adminKey, 'resourceId=ev-gpu'))).events;
    expect(list.map((e) => [e.type, e.actor])).toEqual([
      ['host.ready', 'system'], // the test wrote the record without naming an actor
      ['host.draining', 'operator'],
      ['host.ready', 'operator'],
    ]);
    expect((await events(tenant.key, 'resourceId=ev-gpu')).status).toBe(404);
    const all = (await json<{ events: EventView[] }>(await events(tenant.key, ''))).events;
    expect(all.filter((e) => e.resourceType === 'host')).toEqual([]);
  });
});

describe('following events live', () => {
  test('Accept: text/event-stream sends the kept events, then new ones as they happen, and resumes after Last-Event-ID without repeats', async () => {
    const user = await cp.newAccount('read_write');
    const id = await newPod(user.key);
    const headers = { accept: 'text/event-stream' };
    const first = await readSse(cp.url + `/v2/events?resourceId=${id}`, { headers: { ...headers, authorization: `Bearer ${user.key}` } });
    expect(first.status).toBe(200);
    expect(first.contentType).toMatch(/^text\/event-stream/);
    const created = await first.next();
    expect(JSON.parse(created.data)).toMatchObject({ status: 'PROVISIONING', resourceId: id });
    expect(created.id).toBe(JSON.parse(created.data).id);
    await act(user.key, id, 'stop');
    const stopped = await first.next();
    expect(JSON.parse(stopped.data)).toMatchObject({ previousStatus: 'PROVISIONING', status: 'EXITED' });
    first.close();
    // while nobody follows, two more changes
    await act(user.key, id, 'start');
    await act(user.key, id, 'stop');
    const again = await readSse(cp.url + `/v2/events?resourceId=${id}`, { headers: { ...headers, authorization: `Bearer ${user.key}`, 'last-event-id': stopped.id! } });
    const resumed = [await again.next(), await again.next()].map((e) => JSON.parse(e.data) as EventView);
    expect(resumed.map((e) => [e.previousStatus, e.status])).toEqual([
      ['EXITED', 'PROVISIONING'],
      ['PROVISIONING', 'EXITED'],
    ]);
    await act(user.key, id, 'terminate');
    expect(JSON.parse((await again.next()).data)).toMatchObject({ status: 'TERMINATED' });
    again.close();
  });
});

describe('event retention', () => {
  test('keeps the newest events per resource and the newest in all, oldest first', () => {
    const log = new EventLog({ perResource: 3, total: 5 });
    const add = (resourceId: string, status: string) =>
      log.append({ resourceType: 'pod', resourceId, accountId: 'a', type: `pod.${status}`, status, previousStatus: null, reason: null, actor: 'system' });
    for (const s of ['1', '2', '3', '4']) add('p', s);
    expect(log.forResource('p').map((e) => e.status)).toEqual(['2', '3', '4']);
    add('q', 'a');
    add('q', 'b');
    add('q', 'c');
    // the global cap (5) pushed p's oldest kept events out too
    expect(log.all().map((e) => `${e.resourceId}${e.status}`)).toEqual(['p3', 'p4', 'qa', 'qb', 'qc']);
    expect(log.forResource('p').map((e) => e.status)).toEqual(['3', '4']);
    expect(log.recent('q', 2).map((e) => e.status)).toEqual(['b', 'c']);
    // an id from another run resumes from the oldest kept; one of this run after itself
    expect(log.seqAfter('zzz-3')).toBe(0);
    expect(log.seqAfter(log.all()[2]!.id)).toBe(log.all()[2]!.seq);
  });
});
