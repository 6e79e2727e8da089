// Authentication is decided from the route that matched, never from the URL string (issue 8, item 1).
// Every registered route is enumerated (plugin routes included: the docs UI, GraphQL) and each
// protected one is sent anonymous requests in every request-target spelling the router folds
// together: origin-form, absolute-form, percent-encoded, trailing slash, HEAD, and with an operator's
// key in `?api_key=`, which only /graphql accepts. Each must be 401. The anonymous rate limit is
// raised so that no 429 hides an answer.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildServer } from '../../api/server.ts';
import { principalOf, registeredRoutes, type RegisteredRoute } from '../../api/auth/request-guard.ts';
import { isGpufleetError } from '../../model/base/errors.ts';
import { ADMIN_KEY, REPO_ROOT, startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { rawHeader, sendRaw } from './raw-http.ts';

const UNLIMITED = 'minute=100000000,hour=100000000,day=100000000';

let cp: TestControlPlane;
let routes: RegisteredRoute[];
beforeAll(async () => {
  cp = await startTestControlPlane({ rateLimits: UNLIMITED });
  routes = registeredRoutes(cp.app);
});
afterAll(async () => cp?.close());

/** a path the route matches: each parameter and wildcard filled in */
const concrete = (url: string) => url.replace(/:[^/]+/g, 'x1').replace(/\*/g, 'x');
/** every letter and digit percent-encoded (`/v2/pods` → `/%76%32/%70%6f%64%73`) */
const percentEncoded = (p: string) => p.replace(/[A-Za-z0-9]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
// `/v2/media/:key`: signed media URLs, whose signature is the credential (docs/media.md); `/`: the
// server's name, version and the links to its docs; `/console/session`: the console's sign-in, whose
// credential is the API key in its body, and the console's own files (`/console`, `/console/*`: no
// data, docs/console.md)
const isPublicUrl = (url: string) =>
  url === '/' || url === '/console/session' || url === '/console' || url === '/console/*' || url === '/healthz' || url === '/readyz' || url === '/v2/openapi.json' || url === '/v2/docs' || url.startsWith('/v2/docs/') || url === '/v2/media/:key';

function spellings(p: string, url: string): [string, string][] {
  const forms: [string, string][] = [
    ['origin-form', p],
    ['absolute-form', `http://x${p}`],
    ['absolute-form naming this server', `${cp.url}${p}`],
    ['first segment percent-encoded', p.replace(/^\/([^/]+)/, (_m, seg: string) => `/${percentEncoded(seg)}`)],
    ['every letter percent-encoded', percentEncoded(p)],
    ['trailing slash', `${p}/`],
    ['absolute-form, percent-encoded, trailing slash', `http://x${percentEncoded(p)}/`],
  ];
  // an operator's admin key in the query authenticates nothing but /graphql
  if (url !== '/graphql') forms.push(['operator key in ?api_key=', `${p}?api_key=${ADMIN_KEY}`], ['absolute-form, operator key in ?api_key=', `http://x${p}?api_key=${ADMIN_KEY}`]);
  return forms;
}

describe('the route table', () => {
  test('plugin routes are in it; only health and the docs are public; every other route names a scope', () => {
    const key = (r: RegisteredRoute) => `${r.method} ${r.url}`;
    const all = new Set(routes.map(key));
    for (const r of ['GET /', 'GET /healthz', 'GET /v2/openapi.json', 'GET /v2/docs', 'GET /v2/docs/static/*', 'POST /graphql', 'GET /v2/accounts', 'POST /v2/hosts', 'HEAD /v2/pods'])
      expect(all, r).toContain(r);
    const publicOnes = routes.filter((r) => r.public);
    expect(publicOnes.map(key).filter((k) => !isPublicUrl(k.split(' ')[1]!))).toEqual([]);
    // the docs plugin's own routes (registered by @fastify/swagger-ui, not by us) are public too
    expect(publicOnes.filter((r) => r.url.startsWith('/v2/docs/')).length).toBeGreaterThan(2);
    // worker protocol routes name no scope: they take a worker's own token, never an API key
    expect(routes.filter((r) => !r.public && !r.worker && r.scope === undefined).map(key)).toEqual([]);
    const workerRoutes = routes.filter((r) => r.worker);
    expect(workerRoutes.map(key).sort()).toEqual(
      ['GET job-stop/:workerId', 'GET job-take-batch/:workerId', 'GET job-take/:workerId', 'GET ping/:workerId', 'POST job-done/:workerId/:jobId', 'POST job-stream/:workerId/:jobId'].map(
        (k) => k.replace(' ', ' /v2/:endpointId/'),
      ),
    );
    expect(workerRoutes.every((r) => !r.public && r.scope === undefined && !r.operator)).toBe(true);
    expect(routes.filter((r) => !r.public).length).toBeGreaterThan(60);
  });
});

describe('anonymous requests to protected routes', () => {
  test('every protected route, in every request-target spelling, answers 401 with the rate-limit headers', { timeout: 120_000 }, async () => {
    const failures: string[] = [];
    let sent = 0;
    for (const r of routes.filter((x) => !x.public)) {
      const p = concrete(r.url);
      for (const [form, target] of spellings(p, r.url)) {
        const body = r.method === 'POST' || r.method === 'PATCH' || r.method === 'PUT' ? '{}' : undefined;
        const a = await sendRaw(cp.url, { method: r.method, target, ...(body ? { body } : {}) });
        sent++;
        if (a.status !== 401) failures.push(`${r.method} ${r.url} as ${form} (${target}) → ${a.status} ${a.body.slice(0, 120)}`);
        else if (!rawHeader(a, 'ratelimit')) failures.push(`${r.method} ${target} → 401 without RateLimit`);
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(500);
  });

  test('the two targets of the report (absolute-form, percent-encoded) list no accounts and create none', async () => {
    const before = await cp.services.store.count('accounts');
    for (const target of ['http://x/v2/accounts', '/%76%32/accounts']) {
      const list = await sendRaw(cp.url, { method: 'GET', target });
      expect(list.status, target).toBe(401);
      expect(list.body).not.toContain('admin@gpufleet.local');
      const made = await sendRaw(cp.url, { method: 'POST', target, body: JSON.stringify({ email: 'intruder@evil.test', operator: true }) });
      expect(made.status, target).toBe(401);
    }
    expect(await cp.services.store.count('accounts')).toBe(before);
  });

  test('public routes answer without a key in the same spellings', async () => {
    for (const target of ['/', 'http://x/', '/healthz', 'http://x/healthz', '/%68ealthz', '/healthz/', '/readyz', 'http://x/readyz', '/v2/openapi.json', 'http://x/v2/docs/json']) {
      const a = await sendRaw(cp.url, { method: 'GET', target });
      expect(a.status, target).toBe(200);
    }
  });

  test('targets that match no route are 404 or 405 for anonymous callers, never served', async () => {
    for (const [method, target] of [['GET', '//v2/accounts'], ['GET', '/v2//accounts'], ['GET', '/V2/accounts'], ['GET', '/v2/./accounts'], ['PUT', '/v2/accounts'], ['GET', '/v3/accounts']] as const) {
      const a = await sendRaw(cp.url, { method, target });
      expect([404, 405], `${method} ${target} → ${a.status}`).toContain(a.status);
    }
  });
});

describe('?api_key= and /graphql/', () => {
  const query = JSON.stringify({ query: '{ myself { id } }' });

  test('?api_key= authenticates /graphql and /graphql/ (spec 5.3)', async () => {
    for (const target of [`/graphql?api_key=${ADMIN_KEY}`, `/graphql/?api_key=${ADMIN_KEY}`, `http://x/graphql?api_key=${ADMIN_KEY}`]) {
      const a = await sendRaw(cp.url, { method: 'POST', target, body: query });
      expect(a.status, target).toBe(200);
      expect(a.body, target).toContain('"myself"');
    }
  });

  test('POST /graphql/ (trailing slash) with a Bearer key is served like /graphql', async () => {
    const res = await fetch(`${cp.url}/graphql/`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' }, body: query });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: { myself: { id: string } } };
    expect(body.data.myself.id).toMatch(/^acct_/);
  });

  test('a valid key in ?api_key= on a REST route does not authenticate: 401', async () => {
    for (const p of ['/v2/pods', '/v2/accounts', '/v2/keys', '/v2/billing/pods', '/v2/catalog/gpus']) {
      const res = await fetch(`${cp.url}${p}?api_key=${ADMIN_KEY}`);
      expect(res.status, p).toBe(401);
    }
  });
});

describe('deny by default', () => {
  test('a route registered without access config, by us or by a plugin, needs an operator admin key', async () => {
    const app = await buildServer({ services: cp.services });
    app.get('/v2/unclassified', async () => ({ secret: true }));
    await app.register(async (plugin) => {
      plugin.post('/v2/from-a-plugin', async () => ({ secret: true }));
    });
    app.get('/v2/declared-public', { config: { public: true } }, async () => ({ open: true }));
    await app.ready();
    try {
      const tenant = await cp.newAccount('admin');
      for (const [method, url] of [['GET', '/v2/unclassified'], ['POST', '/v2/from-a-plugin']] as const) {
        expect((await app.inject({ method, url })).statusCode, `${method} ${url} anonymous`).toBe(401);
        expect((await app.inject({ method, url: `http://x${url}` })).statusCode, `${method} ${url} absolute-form`).toBe(401);
        expect((await app.inject({ method, url, headers: { authorization: `Bearer ${tenant.key}` } })).statusCode, `${method} ${url} tenant admin`).toBe(403);
        expect((await app.inject({ method, url, headers: { authorization: `Bearer ${ADMIN_KEY}` } })).statusCode, `${method} ${url} operator`).toBe(200);
      }
      expect((await app.inject({ method: 'GET', url: '/v2/declared-public' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  test('principalOf throws 401 for a request the guard did not authenticate', () => {
    let thrown: unknown;
    try {
      principalOf({} as Parameters<typeof principalOf>[0]);
    } catch (e) {
      thrown = e;
    }
    expect(isGpufleetError(thrown) && thrown.code).toBe('UNAUTHENTICATED');
  });

  test('no code outside the guard reads a caller off the request: principalOf is the one way', async () => {
    const offenders: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      for (const e of await readdir(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) await walk(p);
        else if (e.name.endsWith('.ts')) {
          const text = await readFile(p, 'utf8');
          if (/\b(request|req|r)\.principal\b|decorateRequest\(\s*['"]principal/.test(text)) offenders.push(path.relative(REPO_ROOT, p));
        }
      }
    };
    for (const dir of ['api', 'cli', 'fleet', 'provisioner']) await walk(path.join(REPO_ROOT, dir)).catch(() => undefined);
    expect(offenders).toEqual([]);
  });
});

describe('rate limits cover every request', () => {
  let small: TestControlPlane;
  beforeAll(async () => {
    small = await startTestControlPlane({ rateLimits: 'minute=4,hour=1000,day=1000' });
  });
  afterAll(async () => small?.close());

  test('public routes and targets that match no route are counted like any other', { timeout: 30_000 }, async () => {
    const acct = await small.newAccount('read');
    const get = (p: string) => fetch(`${small.url}${p}`, { headers: { authorization: `Bearer ${acct.key}` } });
    const remaining = (res: Response) => Number(/"minute";r=(\d+);t=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1]);
    const seconds = (res: Response) => Number(/"minute";r=\d+;t=(\d+)/.exec(res.headers.get('ratelimit') ?? '')?.[1]);
    let first = await get('/v2/nope');
    // too close to the end of the minute: start again in a fresh window
    if (seconds(first) < 10) {
      await new Promise((r) => setTimeout(r, (seconds(first) + 1) * 1000));
      first = await get('/v2/nope');
    }
    expect(first.status).toBe(404);
    expect(remaining(first)).toBe(3);
    const health = await get('/healthz');
    expect(health.status).toBe(200);
    expect(remaining(health)).toBe(2);
    const docs = await get('/v2/openapi.json');
    expect(docs.status).toBe(200);
    expect(remaining(docs)).toBe(1);
    expect((await get('/v2/pods')).status).toBe(200);
    const refused = await get('/healthz');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    // anonymous callers are counted per address, on public routes too
    const anon = await fetch(`${small.url}/healthz`);
    expect(anon.headers.get('ratelimit')).toMatch(/"minute";r=\d+/);
  });
});
