// The gateway's own rules with in-process workers (test/harness/lb-local.ts; containers and SSH are
// test/gateway/lb-endpoint-e2e.test.ts): least outstanding requests, the host name form with
// GPUFLEET_LB_DOMAIN, what the worker side is told about requests in flight, and the queue routes
// left to the job interface.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startLocalLbWorld, type LocalLbWorld } from '../harness/lb-local.ts';
import { waitFor } from '../harness/wait-for.ts';

let world: LocalLbWorld;
const call = (path: string, init: RequestInit = {}) =>
  fetch(`${world.cp.url}/v2/${world.endpointId}${path}`, { ...init, headers: { authorization: `Bearer ${world.key}`, ...init.headers } });

beforeAll(async () => {
  world = await startLocalLbWorld({ workers: 2, config: { lbDomain: 'lb.test' } });
  await waitFor('both workers in rotation', async () => {
    const list = (await (await world.cp.api(`/v2/serverless/${world.endpointId}/workers`, { key: world.key })).json()) as { workers: { status: string }[] };
    return list.workers.filter((w) => w.status === 'IDLE').length === 2;
  });
});
afterAll(async () => world?.close());

describe('routing', () => {
  test('least outstanding requests: while one worker holds a slow request, the others get the new ones', async () => {
    const slow = call('/slow?ms=1500');
    await waitFor('the slow request in flight', async () => world.workerIds.some((id) => world.cp.services.workers.requests.inFlightOn(id) === 1));
    const busy = world.workerIds.findIndex((id) => world.cp.services.workers.requests.inFlightOn(id) === 1);
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) seen.add((await call('/echo')).headers.get('x-worker')!);
    expect([...seen]).toEqual([`local-${1 - busy}`]);
    const res = await slow;
    expect(res.headers.get('x-worker')).toBe(`local-${busy}`);
    // and with nothing in flight, both serve
    const both = new Set<string>();
    for (let i = 0; i < 40 && both.size < 2; i++) both.add((await call('/echo')).headers.get('x-worker')!);
    expect(both.size).toBe(2);
  });

  test('the worker side sees requests in flight: the worker is RUNNING, and the endpoint depth counts them', async () => {
    const slow = call('/slow?ms=1200');
    await waitFor('in flight', async () => world.cp.services.workers.requests.depth(world.endpointId).inProgress === 1);
    const list = (await (await world.cp.api(`/v2/serverless/${world.endpointId}/workers`, { key: world.key })).json()) as { workers: { status: string }[] };
    expect(list.workers.map((w) => w.status).sort()).toEqual(['IDLE', 'RUNNING']);
    await (await slow).text();
    await waitFor('done', async () => world.cp.services.workers.requests.depth(world.endpointId).inProgress === 0);
  });

  test('with GPUFLEET_LB_DOMAIN, host <endpoint id>.<domain> reaches the worker at any path, and requestUrls.base says so', async () => {
    const port = new URL(world.cp.url).port;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, path: '/echo/deep?z=9', method: 'GET', headers: { host: `${world.endpointId}.LB.test:${port}`, authorization: `Bearer ${world.key}` } },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ method: 'GET', url: '/echo/deep?z=9' });
    const v2 = (await (await world.cp.api(`/v2/serverless/${world.endpointId}`, { key: world.key })).json()) as { requestUrls: unknown };
    expect(v2.requestUrls).toEqual({ base: `http://${world.endpointId}.lb.test:${port}`, health: `http://${world.endpointId}.lb.test:${port}/ping` });
  });

  test('any method, a long path, and a body without a content type pass through as sent', async () => {
    const long = `/echo/${'segment-'.repeat(80)}end`;
    const body = (await (await call(long, { method: 'PATCH', body: new Uint8Array([1, 2, 3, 255]) })).json()) as { method: string; path: string; bytes: number; headers: Record<string, string> };
    expect(body).toMatchObject({ method: 'PATCH', path: long, bytes: 4 });
    expect(body.headers['content-type']).toBeUndefined();
    const head = await call('/echo', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('x-worker')).toMatch(/^local-/);
    const del = (await (await call('/echo/x', { method: 'DELETE' })).json()) as { method: string };
    expect(del.method).toBe('DELETE');
  });

  test("the gateway's own prefix is not a route, and queue endpoints keep the job interface", async () => {
    const direct = await fetch(`${world.cp.url}/.gateway/${world.endpointId}/echo`, { headers: { authorization: `Bearer ${world.key}` } });
    expect(direct.status).toBe(404);
    expect(((await direct.json()) as { detail: string }).detail).toBe(`No route GET /.gateway/${world.endpointId}/echo.`);
    const q = await world.cp.api('/v2/not-an-endpoint/run', { method: 'POST', key: world.key, json: { input: {} } });
    expect(q.status).toBe(404);
    expect(((await q.json()) as { code: string }).code).toBe('NOT_FOUND');
  });
});
