// An empty body sent with `Content-Type: application/json` is no body: runpod-python's cancel and
// purge-queue send exactly that (requests.post with a JSON content type and no data, so
// Content-Length: 0). Written byte for byte on a socket so nothing in between rewrites the request.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { gpuBody, startPodsControlPlane, uniqueName } from './pods-helpers.ts';
import { sendRaw, type RawAnswer } from './raw-http.ts';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startPodsControlPlane();
});
afterAll(async () => {
  await cp?.close();
});

/** what runpod-python sends for cancel and purge-queue: a JSON content type, Content-Length: 0 */
function emptyJson(method: string, target: string, key = cp.adminKey): Promise<RawAnswer> {
  return sendRaw(cp.url, { method, target, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': '0' } });
}

/** the same request with no body and no content type at all */
function noBody(method: string, target: string, key = cp.adminKey): Promise<RawAnswer> {
  return sendRaw(cp.url, { method, target, headers: { authorization: `Bearer ${key}`, 'content-length': '0' } });
}

/** the JSON body of a raw answer */
function jsonOf(a: RawAnswer): { code?: string } {
  const m = /\{[\s\S]*\}/.exec(a.body);
  return m ? (JSON.parse(m[0]) as { code?: string }) : {};
}

async function create(path: string, body: unknown): Promise<{ id: string }> {
  const res = await cp.api(path, { method: 'POST', json: body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: string };
}

describe('routes that take no body', () => {
  test('DELETE a stack lock with an empty JSON body releases it (204)', async () => {
    const stack = uniqueName('stack');
    expect((await cp.api(`/v2/stack-locks/${stack}`, { method: 'POST', json: { holder: 'me' } })).status).toBe(200);
    const a = await emptyJson('DELETE', `/v2/stack-locks/${stack}?holder=me`);
    expect(a.status, a.body).toBe(204);
    expect((await cp.api(`/v2/stack-locks/${stack}`)).status).toBe(404);
  });

  test('DELETE a pod with an empty JSON body terminates it (204)', async () => {
    const pod = await create('/v2/pods', gpuBody());
    const a = await emptyJson('DELETE', `/v2/pods/${pod.id}`);
    expect(a.status, a.body).toBe(204);
    const after = (await (await cp.api(`/v2/pods/${pod.id}`)).json()) as { status: string };
    expect(after.status).toBe('TERMINATED');
  });
});

describe('routes whose fields are all optional', () => {
  test('POST /v2/hosts/{id}/drain with an empty JSON body drains (drained defaults to true)', async () => {
    const a = await emptyJson('POST', '/v2/hosts/gpu-c/drain');
    expect(a.status, a.body).toBe(200);
    expect(jsonOf(a)).toMatchObject({ id: 'gpu-c', drained: true });
    expect((await cp.api('/v2/hosts/gpu-c/drain', { method: 'POST', json: { drained: false } })).status).toBe(200);
  });

  test('PATCH a template with an empty JSON body, or none, changes nothing and answers 200', async () => {
    const tpl = await create('/v2/templates', { name: uniqueName('tpl'), image: 'busybox:1.36' });
    const { updatedAt: _at, ...before } = (await (await cp.api(`/v2/templates/${tpl.id}`)).json()) as Record<string, unknown>;
    for (const send of [emptyJson, noBody]) {
      const a = await send('PATCH', `/v2/templates/${tpl.id}`);
      expect(a.status, a.body).toBe(200);
      const { updatedAt: _after, ...after } = jsonOf(a) as Record<string, unknown>;
      expect(after).toEqual(before);
    }
  });
});

describe('routes with a required field', () => {
  test('an empty JSON body is answered exactly as no body: 422 naming what is missing, never INVALID_JSON', async () => {
    const pod = await create('/v2/pods', gpuBody());
    for (const [method, target] of [
      ['POST', `/v2/pods/${pod.id}/action`],
      ['POST', '/v2/pods'],
      ['POST', `/v2/stack-locks/${uniqueName('stack')}`],
    ] as const) {
      const empty = await emptyJson(method, target);
      const none = await noBody(method, target);
      expect(empty.status, `${method} ${target}: ${empty.body}`).toBe(422);
      expect(jsonOf(empty)).toEqual(jsonOf(none));
      expect(jsonOf(empty).code).toBe('VALIDATION_FAILED');
    }
  });
});

test('a body that is not JSON is still 400 INVALID_JSON (whitespace is not an empty body)', async () => {
  for (const body of [' ', '{', 'null x']) {
    const a = await sendRaw(cp.url, {
      method: 'POST',
      target: '/v2/pods',
      headers: { authorization: `Bearer ${cp.adminKey}`, 'content-type': 'application/json', 'content-length': String(body.length) },
      body,
    });
    expect(a.status, JSON.stringify(body)).toBe(400);
    expect(jsonOf(a).code).toBe('INVALID_JSON');
  }
});
