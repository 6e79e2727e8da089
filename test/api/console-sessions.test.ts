// The web console's sessions against a real listening control plane (docs/console.md, "Sessions and
// security"): an API key exchanged for a cookie, the cookie's attributes, the cookie in place of the
// Bearer key on REST, GraphQL and SSE with the key's scope, CSRF (token or own Origin) on anything that
// changes state, a foreign Origin refused, WebSocket upgrades checked for Origin, sign-out and a revoked
// key ending the session server-side, and every console mutation in the audit trail with the key's prefix.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { rawHeader, sendRaw } from './raw-http.ts';
import { seedHosts } from '../harness/fake-hosts.ts';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane({ config: { publicUrl: 'https://console.gpufleet.test' } });
});
afterAll(async () => cp?.close());

interface Signed {
  cookie: string;
  setCookie: string;
  csrf: string;
  key: string;
  accountId: string;
}

async function signIn(key: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${cp.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ apiKey: key }) });
}

async function signedIn(scope: 'read' | 'read_write' | 'admin' = 'read_write'): Promise<Signed> {
  const { key, accountId } = await cp.newAccount(scope, 100);
  const res = await signIn(key);
  expect(res.status).toBe(204);
  const setCookie = res.headers.get('set-cookie')!;
  const cookie = setCookie.split(';')[0]!;
  const who = await fetch(`${cp.url}/console/session`, { headers: { cookie } });
  expect(who.status).toBe(200);
  const body = (await who.json()) as { csrfToken: string };
  return { cookie, setCookie, csrf: body.csrfToken, key, accountId };
}

/** a request carrying the session cookie (and no key) */
const withCookie = (s: Signed, path: string, init: RequestInit = {}) =>
  fetch(cp.url + path, { ...init, headers: { cookie: s.cookie, ...(init.body ? { 'content-type': 'application/json' } : {}), ...(init.headers as Record<string, string>) } });

const template = (name: string) => JSON.stringify({ name, image: 'busybox:1.36' });

describe('the exchange', () => {
  test('a good key: 204, a host-only HttpOnly SameSite=Strict cookie of a random secret, stored only as its sha256', async () => {
    const { key, accountId } = await cp.newAccount('read_write');
    const res = await signIn(key);
    expect(res.status).toBe(204);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const setCookie = res.headers.get('set-cookie')!;
    const attrs = setCookie.split(';').map((a) => a.trim());
    const [name, value] = attrs[0]!.split('=');
    // plain HTTP on 127.0.0.1: browsers refuse `__Host-` and Secure there, so the name has no prefix
    expect(name).toBe('gpufleet-session');
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(value).not.toContain(key);
    expect(attrs).toContain('HttpOnly');
    expect(attrs).toContain('SameSite=Strict');
    expect(attrs).toContain('Path=/');
    expect(attrs).toContain('Max-Age=43200');
    expect(attrs.some((a) => /^domain=/i.test(a))).toBe(false);
    expect(attrs).not.toContain('Secure');
    const stored = await cp.services.store.list('consoleSessions', { accountId });
    expect(stored.map((s) => s.id)).toEqual([createHash('sha256').update(value!).digest('hex')]);
    expect(JSON.stringify(stored)).not.toContain(value);
    expect(stored[0]!.keyPrefix).toBe(key.slice(0, 8));
  });

  test('over HTTPS (GPUFLEET_PUBLIC_URL https, its host named): __Host-gpufleet-session, Secure; only that name opens a session there', async () => {
    const { key } = await cp.newAccount('read');
    const host = 'console.gpufleet.test';
    const body = JSON.stringify({ apiKey: key });
    const res = await sendRaw(cp.url, { method: 'POST', target: '/console/session', headers: { host }, body });
    expect(res.status).toBe(204);
    const setCookie = rawHeader(res, 'set-cookie')!;
    expect(setCookie).toMatch(/^__Host-gpufleet-session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=43200; HttpOnly; Secure; SameSite=Strict$/);
    const value = setCookie.split(';')[0]!.split('=')[1]!;
    const ok = await sendRaw(cp.url, { method: 'GET', target: '/v2/pods', headers: { host, cookie: `__Host-gpufleet-session=${value}` } });
    expect(ok.status).toBe(200);
    // the same secret under the plain-HTTP name, on the HTTPS host: no session is read
    const plain = await sendRaw(cp.url, { method: 'GET', target: '/v2/pods', headers: { host, cookie: `gpufleet-session=${value}` } });
    expect(plain.status).toBe(401);
    // the Origin the console has there is the public URL's
    const post = await sendRaw(cp.url, {
      method: 'POST',
      target: '/console/session',
      headers: { host, origin: 'https://console.gpufleet.test' },
      body,
    });
    expect(post.status).toBe(204);
  });

  test('plain HTTP to a name that is not loopback: 403 CONSOLE_NEEDS_HTTPS, and no session is made', async () => {
    const { key, accountId } = await cp.newAccount('read');
    const res = await sendRaw(cp.url, { method: 'POST', target: '/console/session', headers: { host: 'gpufleet.lan:8080' }, body: JSON.stringify({ apiKey: key }) });
    expect(res.status).toBe(403);
    expect(res.body).toContain('CONSOLE_NEEDS_HTTPS');
    expect(await cp.services.store.list('consoleSessions', { accountId })).toEqual([]);
    // localhost is loopback too
    const local = await sendRaw(cp.url, { method: 'POST', target: '/console/session', headers: { host: 'localhost:8080' }, body: JSON.stringify({ apiKey: key }) });
    expect(local.status).toBe(204);
  });

  test('plain HTTP: two cookies of the session name (one planted by another port or a sibling host) are refused, 401, not one picked', async () => {
    const victim = await signedIn('read_write');
    const planter = await signedIn('read_write');
    // the browser sends the planted one first (a Domain cookie, or one a pod's port on this host name set)
    const both = `${planter.cookie}; ${victim.cookie}`;
    const who = await fetch(`${cp.url}/console/session`, { headers: { cookie: both } });
    expect(who.status).toBe(401);
    expect(((await who.json()) as { detail: string }).detail).toMatch(/More than one gpufleet-session cookie/);
    const refused = await fetch(`${cp.url}/v2/templates`, { headers: { cookie: both } });
    expect(refused.status).toBe(401);
    // counted against the caller's windows like any refused request (the refusal comes after the count)
    expect(refused.headers.get('ratelimit')).toMatch(/"minute";r=\d+/);
    // each alone is its own account
    expect(((await (await fetch(`${cp.url}/console/session`, { headers: { cookie: victim.cookie } })).json()) as { accountId: string }).accountId).toBe(victim.accountId);
    // signing in again still works (its cookie replaces the host's own), and ends neither session by guess
    const again = await signIn(victim.key, { cookie: both });
    expect(again.status).toBe(204);
    expect((await fetch(`${cp.url}/console/session`, { headers: { cookie: planter.cookie } })).status).toBe(200);
  });

  test('a wrong key: 401 problem+json with a clear message; a revoked key the same; no key: 422; no cookie set', async () => {
    const wrong = await signIn('gf_this-is-not-a-key-of-this-fleet');
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('content-type')).toContain('application/problem+json');
    expect(wrong.headers.get('set-cookie')).toBeNull();
    const p = (await wrong.json()) as { code: string; detail: string };
    expect(p.code).toBe('UNAUTHENTICATED');
    expect(p.detail).toMatch(/^Sign-in refused: The API key is not valid\./);

    const { key } = await cp.newAccount('read_write');
    const keyId = (await cp.services.store.list('apiKeys', { hash: createHash('sha256').update(key).digest('hex') }))[0]!.id;
    expect((await cp.api(`/v2/keys/${keyId}`, { method: 'DELETE' })).status).toBe(200);
    const revoked = await signIn(key);
    expect(revoked.status).toBe(401);
    expect(((await revoked.json()) as { detail: string }).detail).toContain('revoked');

    const none = await fetch(`${cp.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(none.status).toBe(422);
  });

  test('sign-in tries are rate limited per address, like any unauthenticated request', async () => {
    const tight = await startTestControlPlane({ rateLimits: 'minute=3,hour=1000,day=10000' });
    try {
      const tries: number[] = [];
      for (let i = 0; i < 4; i++)
        tries.push((await fetch(`${tight.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiKey: `gf_wrong-key-${i}` }) })).status);
      expect(tries).toEqual([401, 401, 401, 429]);
      // the good key is refused too while the address is over its limit
      const good = await fetch(`${tight.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiKey: tight.adminKey }) });
      expect(good.status).toBe(429);
      expect(good.headers.get('set-cookie')).toBeNull();
    } finally {
      await tight.close();
    }
  });

  test('a sign-in from another site (foreign Origin) is refused: no login CSRF', async () => {
    const { key } = await cp.newAccount('read');
    const res = await signIn(key, { origin: 'http://evil.example' });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { code: string }).code).toBe('CSRF_REFUSED');
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  test('GET /console/session: who the session is, with its CSRF token; a Bearer key has no session (401)', async () => {
    const s = await signedIn('read_write');
    const who = (await (await withCookie(s, '/console/session')).json()) as Record<string, unknown>;
    expect(who).toMatchObject({ accountId: s.accountId, keyPrefix: s.key.slice(0, 8), scope: 'read_write', operator: false, csrfToken: s.csrf });
    expect(JSON.stringify(who)).not.toContain(s.key);
    const bearer = await cp.api('/console/session', { key: s.key });
    expect(bearer.status).toBe(401);
    const admin = await signIn(cp.adminKey);
    const adminWho = (await (await fetch(`${cp.url}/console/session`, { headers: { cookie: admin.headers.get('set-cookie')!.split(';')[0]! } })).json()) as { operator: boolean; scope: string };
    expect(adminWho).toMatchObject({ operator: true, scope: 'admin' });
  });
});

describe('the cookie in place of the Bearer key', () => {
  test('REST, GraphQL, the job interface and the SSE event stream take it, as the account it belongs to', async () => {
    const s = await signedIn('read_write');
    const other = await cp.newAccount('read_write');
    await cp.api('/v2/templates', { key: other.key, method: 'POST', json: { name: 'not-mine', image: 'busybox:1.36' } });
    const list = await withCookie(s, '/v2/templates');
    expect(list.status).toBe(200);
    expect(JSON.stringify(await list.json())).not.toContain('not-mine');

    // a GraphQL POST is state-changing for the CSRF rule, queries too (the token comes with it)
    const gqlPost = await withCookie(s, '/graphql', { method: 'POST', headers: { 'x-csrf-token': s.csrf }, body: JSON.stringify({ query: 'query { myself { id } }' }) });
    expect(await gqlPost.json()).toEqual({ data: { myself: { id: s.accountId } } });

    // the job interface: a queue endpoint's health, and a run (with the token)
    const tpl = (await (await cp.api('/v2/templates', { key: s.key, method: 'POST', json: { name: 'jobs', image: 'busybox:1.36', serverless: true } })).json()) as { id: string };
    const ep = (await (await cp.api('/v1/endpoints', { key: s.key, method: 'POST', json: { templateId: tpl.id, gpuTypeIds: ['ADA_24'] } })).json()) as { id: string };
    expect((await withCookie(s, `/v2/${ep.id}/health`)).status).toBe(200);
    expect((await withCookie(s, `/v2/${ep.id}/run`, { method: 'POST', body: JSON.stringify({ input: {} }) })).status).toBe(403);
    const run = await withCookie(s, `/v2/${ep.id}/run`, { method: 'POST', headers: { 'x-csrf-token': s.csrf }, body: JSON.stringify({ input: {} }) });
    expect(run.status).toBe(200);
    expect(((await run.json()) as { id: string }).id).toBeTruthy();

    const ac = new AbortController();
    const sse = await withCookie(s, '/v2/events', { headers: { accept: 'text/event-stream' }, signal: ac.signal });
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toContain('text/event-stream');
    ac.abort();
    await sse.body?.cancel().catch(() => undefined);
  });

  test('the GETs that change state (a job status with ?ttl, a job stream that consumes chunks) need the CSRF token or the console Origin too', async () => {
    const s = await signedIn('read_write');
    const tpl = (await (await cp.api('/v2/templates', { key: s.key, method: 'POST', json: { name: 'get-csrf', image: 'busybox:1.36', serverless: true } })).json()) as { id: string };
    const ep = (await (await cp.api('/v1/endpoints', { key: s.key, method: 'POST', json: { templateId: tpl.id, gpuTypeIds: ['ADA_24'] } })).json()) as { id: string };
    const job = (await (await cp.api(`/v2/${ep.id}/run`, { key: s.key, method: 'POST', json: { input: {} } })).json()) as { id: string };
    // final, so the stream answers at once
    expect((await cp.api(`/v2/${ep.id}/cancel/${job.id}`, { key: s.key, method: 'POST' })).status).toBe(200);
    const code = async (r: Response) => ((await r.json()) as { code?: string }).code;
    // a plain status read is a read: the cookie alone does
    expect((await withCookie(s, `/v2/${ep.id}/status/${job.id}`)).status).toBe(200);
    // ?ttl changes when the job is dropped: refused without the token, as a link from a page would send it
    const ttl = await withCookie(s, `/v2/${ep.id}/status/${job.id}?ttl=1000`);
    expect(ttl.status).toBe(403);
    expect(await code(ttl)).toBe('CSRF_REFUSED');
    expect((await withCookie(s, `/v2/${ep.id}/status/${job.id}?ttl=600000`, { headers: { 'x-csrf-token': s.csrf } })).status).toBe(200);
    expect((await withCookie(s, `/v2/${ep.id}/status/${job.id}?ttl=600000`, { headers: { origin: cp.url } })).status).toBe(200);
    // the stream hands out each chunk once
    const stream = await withCookie(s, `/v2/${ep.id}/stream/${job.id}`);
    expect(stream.status).toBe(403);
    expect(await code(stream)).toBe('CSRF_REFUSED');
    expect((await withCookie(s, `/v2/${ep.id}/stream/${job.id}`, { headers: { 'x-csrf-token': s.csrf } })).status).toBe(200);
    // a Bearer key needs neither
    expect((await cp.api(`/v2/${ep.id}/stream/${job.id}`, { key: s.key })).status).toBe(200);
  });

  test('a state-changing request needs the CSRF token or the console Origin; a foreign Origin is refused even with the token', async () => {
    const s = await signedIn('read_write');
    const none = await withCookie(s, '/v2/templates', { method: 'POST', body: template('csrf-none') });
    expect(none.status).toBe(403);
    expect(((await none.json()) as { code: string }).code).toBe('CSRF_REFUSED');
    const wrongToken = await withCookie(s, '/v2/templates', { method: 'POST', headers: { 'x-csrf-token': 'x'.repeat(43) }, body: template('csrf-wrong') });
    expect(wrongToken.status).toBe(403);
    const token = await withCookie(s, '/v2/templates', { method: 'POST', headers: { 'x-csrf-token': s.csrf }, body: template('csrf-token') });
    expect(token.status).toBe(201);
    const origin = await withCookie(s, '/v2/templates', { method: 'POST', headers: { origin: cp.url }, body: template('csrf-origin') });
    expect(origin.status).toBe(201);
    const foreign = await withCookie(s, '/v2/templates', { method: 'POST', headers: { origin: 'http://evil.example', 'x-csrf-token': s.csrf }, body: template('csrf-foreign') });
    expect(foreign.status).toBe(403);
    expect(((await foreign.json()) as { code: string }).code).toBe('CSRF_REFUSED');
    // a read from another origin with the cookie is refused too (a same-site page of another host)
    expect((await withCookie(s, '/v2/templates', { headers: { origin: 'http://127.0.0.2:1' } })).status).toBe(403);
    const names = ((await (await cp.api('/v2/templates', { key: s.key })).json()) as { templates: { name: string }[] }).templates.map((t) => t.name);
    expect(names.sort()).toEqual(['csrf-origin', 'csrf-token']);
    // a GraphQL mutation without the token is refused; with it, it runs
    const mutation = JSON.stringify({ query: 'mutation { saveTemplate(input: { name: "gql-t", imageName: "busybox:1.36", containerDiskInGb: 5, dockerArgs: "", env: [], volumeInGb: 0 }) { id } }' });
    expect((await withCookie(s, '/graphql', { method: 'POST', body: mutation })).status).toBe(403);
    const ran = await withCookie(s, '/graphql', { method: 'POST', headers: { 'x-csrf-token': s.csrf }, body: mutation });
    expect(ran.status).toBe(200);
    expect(((await ran.json()) as { data?: { saveTemplate?: { id?: string } } }).data?.saveTemplate?.id).toBeTruthy();
    // a Bearer key needs no token (it is not ambient: a page cannot make a browser send it)
    expect((await cp.api('/v2/templates', { key: s.key, method: 'POST', json: { name: 'bearer', image: 'busybox:1.36' }, headers: { cookie: s.cookie } })).status).toBe(201);
  });

  test('a read key stays read-only through its cookie', async () => {
    const s = await signedIn('read');
    expect((await withCookie(s, '/v2/templates')).status).toBe(200);
    const write = await withCookie(s, '/v2/templates', { method: 'POST', headers: { 'x-csrf-token': s.csrf }, body: template('read-key') });
    expect(write.status).toBe(403);
    expect(((await write.json()) as { code: string }).code).toBe('FORBIDDEN');
    const who = (await (await withCookie(s, '/console/session')).json()) as { scope: string };
    expect(who.scope).toBe('read');
    // the refused attempt is in the audit trail
    const events = ((await (await cp.api(`/v2/events?resourceId=${s.accountId}`, { key: s.key })).json()) as { events: { reason: string }[] }).events;
    expect(events.map((e) => e.reason)).toContain('POST /v2/templates → 403');
  });

  test('a WebSocket upgrade with the cookie must come from the console Origin (exec)', async () => {
    const s = await signedIn('read_write');
    const upgrade = (origin?: string) =>
      sendRaw(cp.url, {
        method: 'GET',
        target: '/v2/pods/pod-none/exec/ws',
        headers: {
          cookie: s.cookie,
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          ...(origin ? { origin } : {}),
        },
      });
    const noOrigin = await upgrade();
    expect(noOrigin.status).toBe(403);
    expect(noOrigin.body).toContain('CSRF_REFUSED');
    expect((await upgrade('http://evil.example')).status).toBe(403);
    // from the console: past the guard, to the route, which refuses the pod id
    const own = await upgrade(cp.url);
    expect(own.status).toBe(422);
    expect(own.body).not.toContain('CSRF_REFUSED');
  });
});

describe('the end of a session', () => {
  test('sign-out needs the token, ends the session server-side and clears the cookie', async () => {
    const s = await signedIn('read_write');
    expect((await withCookie(s, '/console/session', { method: 'DELETE' })).status).toBe(403);
    const out = await withCookie(s, '/console/session', { method: 'DELETE', headers: { 'x-csrf-token': s.csrf } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toBe('gpufleet-session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict');
    expect(await cp.services.store.list('consoleSessions', { accountId: s.accountId })).toEqual([]);
    // the cookie a browser (or a thief) kept opens nothing now
    const after = await withCookie(s, '/v2/templates');
    expect(after.status).toBe(401);
    expect(((await after.json()) as { detail: string }).detail).toMatch(/console session has ended/);
  });

  test('revoking the key ends its sessions', async () => {
    const s = await signedIn('read_write');
    expect((await withCookie(s, '/v2/templates')).status).toBe(200);
    const keyId = (await cp.services.store.list('apiKeys', { accountId: s.accountId }))[0]!.id;
    expect((await cp.api(`/v2/keys/${keyId}`, { method: 'DELETE' })).status).toBe(200);
    expect(await cp.services.store.list('consoleSessions', { keyId })).toEqual([]);
    expect((await withCookie(s, '/v2/templates')).status).toBe(401);
  });

  test('signing in again from the same browser ends the session its old cookie named', async () => {
    const s = await signedIn('read_write');
    const again = await signIn(s.key, { cookie: s.cookie });
    expect(again.status).toBe(204);
    const fresh = again.headers.get('set-cookie')!.split(';')[0]!;
    expect(fresh).not.toBe(s.cookie);
    expect((await withCookie(s, '/v2/templates')).status).toBe(401);
    expect((await fetch(`${cp.url}/v2/templates`, { headers: { cookie: fresh } })).status).toBe(200);
    expect(await cp.services.store.list('consoleSessions', { accountId: s.accountId })).toHaveLength(1);
  });

  test('a session past its lifetime opens nothing and is deleted', async () => {
    const short = await startTestControlPlane({ config: { consoleSessionTtlMs: 1500 } });
    try {
      const { key, accountId } = await short.newAccount('read');
      const res = await fetch(`${short.url}/console/session`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ apiKey: key }) });
      const cookie = res.headers.get('set-cookie')!;
      expect(cookie).toContain('Max-Age=1;');
      const value = cookie.split(';')[0]!;
      expect((await fetch(`${short.url}/v2/templates`, { headers: { cookie: value } })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1600));
      expect((await fetch(`${short.url}/v2/templates`, { headers: { cookie: value } })).status).toBe(401);
      expect(await short.services.store.list('consoleSessions', { accountId })).toEqual([]);
    } finally {
      await short.close();
    }
  });
});

describe('the audit trail', () => {
  test('each mutation through a session is an event of the account naming the key prefix; reads are not', async () => {
    const s = await signedIn('read_write');
    await withCookie(s, '/v2/templates');
    expect((await withCookie(s, '/v2/templates', { method: 'POST', headers: { 'x-csrf-token': s.csrf }, body: template('audited') })).status).toBe(201);
    await withCookie(s, '/graphql', { method: 'POST', headers: { 'x-csrf-token': s.csrf }, body: JSON.stringify({ query: 'query { myself { id } }' }) });
    const res = await cp.api(`/v2/events?resourceId=${s.accountId}`, { key: s.key });
    const events = ((await res.json()) as { events: Record<string, unknown>[] }).events;
    const prefix = s.key.slice(0, 8);
    expect(events.map((e) => [e.type, e.reason, e.via, e.keyPrefix])).toEqual([
      ['console.sign_in', 'POST /console/session → 204', 'console', prefix],
      ['console.action', 'POST /v2/templates → 201', 'console', prefix],
    ]);
    expect(events[1]!.actor).toMatch(/^user:key_/);
  });

  test('the status changes a console action causes are events with via console and the key prefix; a key\'s own are not', async () => {
    await seedHosts(cp.services.store, [{ gpus: 8, dataCenterId: 'dc-console-audit' }]);
    const s = await signedIn('read_write');
    const body = (name: string) => JSON.stringify({ name, image: 'busybox:1.36', gpu: { id: 'NVIDIA H100 80GB HBM3', count: 1 }, dataCenterIds: ['dc-console-audit'] });
    const viaConsole = await withCookie(s, '/v2/pods', { method: 'POST', headers: { 'x-csrf-token': s.csrf }, body: body('from-console') });
    expect(viaConsole.status, await viaConsole.clone().text()).toBe(201);
    const viaKey = await cp.api('/v2/pods', { key: s.key, method: 'POST', body: body('from-key'), headers: { 'content-type': 'application/json' } });
    expect(viaKey.status).toBe(201);
    const eventsOf = async (id: string) =>
      ((await (await cp.api(`/v2/events?resourceId=${id}`, { key: s.key })).json()) as { events: Record<string, unknown>[] }).events;
    const [first] = await eventsOf(((await viaConsole.json()) as { id: string }).id);
    expect(first).toMatchObject({ resourceType: 'pod', via: 'console', keyPrefix: s.key.slice(0, 8) });
    expect(first!.actor).toMatch(/^user:key_\w+$/);
    const [plain] = await eventsOf(((await viaKey.json()) as { id: string }).id);
    expect(plain!.actor).toBe(first!.actor);
    expect(plain).not.toHaveProperty('via');
    expect(plain).not.toHaveProperty('keyPrefix');
  });
});
