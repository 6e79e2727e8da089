// HTTP-level behaviour of the v2 interface: problem+json for unknown routes (404), wrong methods
// (405), bad JSON (400), wrong content type (415); rate-limit headers on successes and on every kind
// of error; the OpenAPI document and the docs page.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { call, createPod, expectProblem, expectRateLimitHeaders, gpuBody, startPodsControlPlane } from './pods-helpers.ts';

let cp: TestControlPlane;
let user: { accountId: string; key: string };
let podId: string;

beforeAll(async () => {
  cp = await startPodsControlPlane();
  user = await cp.newAccount('read_write');
  podId = (await createPod(cp, gpuBody(), user.key)).body.id;
});
afterAll(async () => cp?.close());

describe('problem+json for what no route answers', () => {
  test('unknown routes → 404', async () => {
    for (const path of ['/v2/nope', '/v2/pods/x/y/z', '/v2/pod', '/v2/', '/v2/pods/x/actions']) {
      const c = await call(cp, path, { key: user.key });
      expectProblem(c, 404, { code: 'ROUTE_NOT_FOUND' });
    }
    // without a key too: an unknown route is not an authentication question
    expectProblem(await call(cp, '/v2/nope', { key: null }), 404);
  });

  test('wrong methods → 405 with Allow', async () => {
    const cases: [string, string, string[]][] = [
      ['PUT', '/v2/pods', ['GET', 'POST']],
      ['DELETE', '/v2/pods', ['GET', 'POST']],
      ['PUT', `/v2/pods/${podId}`, ['DELETE', 'GET', 'PATCH']],
      ['POST', `/v2/pods/${podId}`, ['DELETE', 'GET', 'PATCH']],
      ['GET', `/v2/pods/${podId}/action`, ['POST']],
      ['DELETE', `/v2/pods/${podId}/action`, ['POST']],
    ];
    for (const [method, path, allow] of cases) {
      const c = await call(cp, path, { method, key: user.key, ...(method === 'PUT' || method === 'POST' ? { json: {} } : {}) });
      expectProblem(c, 405, { code: 'METHOD_NOT_ALLOWED' });
      const got = (c.res.headers.get('allow') ?? '').split(',').map((s) => s.trim()).filter((m) => m !== 'HEAD' && m !== 'OPTIONS');
      expect(got.sort(), `${method} ${path}`).toEqual(allow);
    }
    expect((await call(cp, `/v2/pods/${podId}`, { key: user.key })).body.status).toBe('PROVISIONING');
  });

  test('bad JSON → 400 on every route with a body', async () => {
    for (const [method, path] of [['POST', '/v2/pods'], ['PATCH', `/v2/pods/${podId}`], ['POST', `/v2/pods/${podId}/action`]] as const) {
      // an empty body is no body, not bad JSON (issue 9): test/api/empty-json-body.test.ts
      for (const body of ['{', '[1,', '{"a":1}x', ' ']) {
        const c = await call(cp, path, { method, key: user.key, headers: { 'content-type': 'application/json' }, body });
        expectProblem(c, 400);
      }
    }
  });

  test('wrong content type → 415 on every route with a body', async () => {
    for (const [method, path] of [['POST', '/v2/pods'], ['PATCH', `/v2/pods/${podId}`], ['POST', `/v2/pods/${podId}/action`]] as const) {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x']) {
        const c = await call(cp, path, { method, key: user.key, headers: { 'content-type': type }, body: 'action=stop' });
        expectProblem(c, 415, { code: 'UNSUPPORTED_MEDIA_TYPE' });
      }
    }
    expect((await call(cp, `/v2/pods/${podId}`, { key: user.key })).body.status).toBe('PROVISIONING');
  });

  test('JSON with a charset or a +json type is JSON', async () => {
    const c = await call(cp, `/v2/pods/${podId}`, {
      method: 'PATCH',
      key: user.key,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ args: 'charset' }),
    });
    expect(c.status, c.text).toBe(200);
  });

  test('a body over the limit → 413 problem', async () => {
    const c = await call(cp, '/v2/pods', { method: 'POST', key: user.key, json: gpuBody({ args: 'x'.repeat(2 * 1024 * 1024) }) });
    expectProblem(c, 413);
  });
});

describe('RateLimit headers on every /v2 response', () => {
  test('successes and every error status carry both headers; r counts down', async () => {
    const seen: number[] = [];
    const rs: number[] = [];
    const check = async (path: string, init: Parameters<typeof call>[2], status: number) => {
      const c = await call(cp, path, init); // call() parses and checks both headers
      expect(c.status, `${path}: ${c.text}`).toBe(status);
      seen.push(status);
      const { limit } = expectRateLimitHeaders(c.res);
      if (init?.key === user.key) rs.push(limit[0]!.params.r!);
    };
    await check('/v2/pods', { key: user.key }, 200);
    await check(`/v2/pods/${podId}`, { key: user.key }, 200);
    await check('/v2/pods', { method: 'POST', key: user.key, json: gpuBody() }, 201);
    await check('/v2/pods', { method: 'POST', key: user.key, headers: { 'content-type': 'application/json' }, body: '{' }, 400);
    await check('/v2/pods', { key: null }, 401);
    await check('/v2/pods', { key: 'gf_unknown_key_0123456789' }, 401);
    await check('/v2/keys', { key: user.key }, 403);
    await check('/v2/pods/missing', { key: user.key }, 404);
    await check('/v2/nope', { key: user.key }, 404);
    await check('/v2/pods', { method: 'PUT', key: user.key, json: {} }, 405);
    await check(`/v2/pods/${podId}/action`, { method: 'POST', key: user.key, json: { action: 'start' } }, 409);
    await check('/v2/pods', { method: 'POST', key: user.key, headers: { 'content-type': 'text/plain' }, body: 'x' }, 415);
    await check('/v2/pods', { method: 'POST', key: user.key, json: { bogus: 1 } }, 422);
    expect(new Set(seen)).toEqual(new Set([200, 201, 400, 401, 403, 404, 405, 409, 415, 422]));
    // the caller's own minute window counts each of its requests
    for (let i = 1; i < rs.length; i++) expect(rs[i]).toBeLessThan(rs[i - 1]!);
  });

  test('the policy states the configured quotas', async () => {
    const c = await call(cp, '/v2/pods', { key: user.key });
    const { policy } = expectRateLimitHeaders(c.res);
    expect(policy.map((p) => p.params.q)).toEqual([600, 10000, 100000]);
  });
});

describe('OpenAPI and docs', () => {
  test('/v2/openapi.json describes version 2.0.0 with the pod paths', async () => {
    const c = await call(cp, '/v2/openapi.json', { key: null, unlimited: true });
    expect(c.status).toBe(200);
    expect(c.res.headers.get('content-type')).toMatch(/json/);
    const doc = c.body;
    expect(doc.info.version).toBe('2.0.0');
    expect(doc.openapi).toMatch(/^3\./);
    const paths = doc.paths as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths['/v2/pods'] ?? {}).sort()).toEqual(expect.arrayContaining(['get', 'post']));
    expect(Object.keys(paths['/v2/pods/{id}'] ?? {}).sort()).toEqual(expect.arrayContaining(['delete', 'get', 'patch']));
    expect(Object.keys(paths['/v2/pods/{id}/action'] ?? {})).toContain('post');
    const action = paths['/v2/pods/{id}/action']!.post as { responses: Record<string, unknown> };
    for (const code of ['200', '204', '400', '401', '403', '404', '409', '422', '429']) expect(Object.keys(action.responses)).toContain(code);
    // the action body of 2.3: object, no additional properties, action required, four values
    const body = (action as unknown as { requestBody: { content: Record<string, { schema: Record<string, unknown> }> } }).requestBody.content['application/json']!.schema;
    expect(body).toMatchObject({ type: 'object', additionalProperties: false, required: ['action'] });
    expect([...(body.properties as Record<string, { enum: string[] }>).action!.enum].sort()).toEqual(['restart', 'start', 'stop', 'terminate']);
  });

  test('/v2/docs answers HTML', async () => {
    const res = await fetch(`${cp.url}/v2/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(await res.text()).toMatch(/<html/i);
  });
});
