// GET /: what this server is and where to go next (docs, OpenAPI, GraphQL, health). Public, like
// /healthz: it says nothing about accounts or the fleet (docs/auth.md, "How a request is authenticated").
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

/** the version in gpufleet's own package.json, found by walking up from this file (sources or dist/) */
function packageVersion(): string {
  for (let dir = new URL('..', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'gpufleet' && pkg.version) return pkg.version;
    } catch {
      // no package.json here: look one folder up
    }
    if (new URL('..', dir).href === dir.href) return 'unknown';
  }
}

const aboutSchema = {
  type: 'object',
  properties: Object.fromEntries(['name', 'version', 'docs', 'openapi', 'graphql', 'health'].map((k) => [k, { type: 'string' }])),
} as const;

export function aboutRoute(app: FastifyInstance): void {
  const about = { name: 'gpufleet', version: packageVersion(), docs: '/v2/docs', openapi: '/v2/openapi.json', graphql: '/graphql', health: '/healthz' };
  app.get('/', { config: { public: true }, schema: { hide: true, response: { 200: aboutSchema } } }, async () => about);
}
