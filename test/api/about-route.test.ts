// GET / on a listening server, without a key: gpufleet's name and version and the paths of its docs,
// OpenAPI document, GraphQL endpoint and health check, each of which answers (the links are not stale).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { REPO_ROOT, startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane();
});
afterAll(async () => cp?.close());

test('GET / answers 200 with the name, version and links, without a key', async () => {
  const { version } = JSON.parse(await readFile(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  const res = await fetch(`${cp.url}/`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const about = (await res.json()) as Record<string, string>;
  expect(about).toEqual({ name: 'gpufleet', version, docs: '/v2/docs', openapi: '/v2/openapi.json', graphql: '/graphql', health: '/healthz' });
  // the public links answer without a key; /graphql wants one (401, not 404)
  for (const link of [about.docs, about.openapi, about.health]) expect((await fetch(`${cp.url}${link}`)).status, link).toBe(200);
  const gql = await fetch(`${cp.url}${about.graphql}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ myself { id } }"}' });
  expect(gql.status).toBe(401);
});
