// The job interface's routes are `/v2/:endpointId/…`: a parameter where the rest of the API has
// static segments (`/v2/pods`, `/v2/hosts`, `/v2/serverless`, …). find-my-way prefers static
// segments, so every existing route must still be the one that answers its own paths. The server's
// route table (every route buildServer registers, plugins included) is loaded into a bare Fastify
// router with the server's router options, each route answering its own pattern; then a concrete
// path of every route is sent and the pattern that answered is compared.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildServer } from '../../../api/server.ts';
import { registeredRoutes } from '../../../api/auth/request-guard.ts';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';

let cp: TestControlPlane;
let routes: { method: string; url: string }[];
let router: FastifyInstance;

beforeAll(async () => {
  cp = await startTestControlPlane();
  const app = await buildServer({ services: cp.services });
  await app.ready();
  routes = registeredRoutes(app).filter((r) => r.method !== 'HEAD');
  await app.close();
  // the router options of api/server.ts
  router = Fastify({ routerOptions: { ignoreTrailingSlash: true } });
  for (const r of routes) router.route({ method: r.method as 'GET', url: r.url, handler: async () => ({ route: r.url }) });
  await router.ready();
});
afterAll(async () => {
  await router?.close();
  await cp?.close();
});

/** a path of the route: each parameter an id-like value, each wildcard a segment */
const concrete = (url: string) => url.replace(/:[^/]+/g, 'abcdefghijklmn').replace(/\*/g, 'x');

async function routeOf(method: string, url: string): Promise<string> {
  const res = await router.inject({ method: method as 'GET', url });
  return res.statusCode === 200 ? (res.json() as { route: string }).route : `(${res.statusCode})`;
}

test('every route answers its own paths: no /v2/<static> route is shadowed by /v2/:endpointId/…, nor the reverse', async () => {
  expect(routes.some((r) => r.url === '/v2/:endpointId/run')).toBe(true);
  expect(routes.length).toBeGreaterThan(80);
  const wrong: string[] = [];
  for (const r of routes) {
    const path = concrete(r.url);
    const got = await routeOf(r.method, path);
    if (got !== r.url) wrong.push(`${r.method} ${path}: answered by ${got}, registered ${r.url}`);
  }
  expect(wrong).toEqual([]);
});

test('a static segment where an endpoint id would be still reaches the static route (endpoint ids are 14 alphanumerics)', async () => {
  for (const [method, path, route] of [
    ['GET', '/v2/pods/health', '/v2/pods/:id'],
    ['GET', '/v2/serverless/health', '/v2/serverless/:id'],
    ['GET', '/v2/hosts/health', '/v2/hosts/:id'],
    ['GET', '/v2/catalog/health', '/v2/:endpointId/health'],
  ] as const) {
    expect(await routeOf(method, path), path).toBe(route);
  }
});
