// GET /console and /console/…: the web console's bundle (docs/console.md), read once at start from
// GPUFLEET_CONSOLE_DIR or the build's dist/console (bin/build-console.js). Public, like /v2/docs: the
// files hold no data; every call they make is the public API's, authenticated. Served with a strict
// Content-Security-Policy: nothing from another origin, no inline script or style, no framing.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { GpufleetError } from '../../model/index.ts';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "media-src 'self' blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

interface ConsoleFile {
  body: Buffer;
  type: string;
  etag: string;
  /** named by its content's hash: cached for a year */
  immutable: boolean;
}

/** where the built console is: the setting, else dist/console beside the sources or inside dist/ */
export function consoleDir(configured?: string): string | null {
  if (configured) return configured;
  const here = path.dirname(fileURLToPath(import.meta.url));
  // sources: <repo>/api/console → <repo>/dist/console; built: <repo>/dist/api/console → <repo>/dist/console
  for (const dir of [path.resolve(here, '../../dist/console'), path.resolve(here, '../../console')]) {
    if (existsSync(path.join(dir, 'index.html')) && readdirSync(dir).some((f) => f.endsWith('.js'))) return dir;
  }
  return null;
}

function readFiles(dir: string): Map<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    const type = TYPES[path.extname(name)];
    if (!type || !statSync(full).isFile()) continue;
    const body = readFileSync(full);
    files.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`, immutable: /-[A-Z0-9]{8}\.(js|css)$/.test(name) });
  }
  return files;
}

function send(reply: FastifyReply, file: ConsoleFile, ifNoneMatch: string | undefined): FastifyReply {
  reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('cross-origin-resource-policy', 'same-origin')
    .header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
    .header('etag', file.etag);
  if (ifNoneMatch === file.etag) return reply.code(304).send();
  return reply.type(file.type).send(file.body);
}

/**
 * Registers /console (index.html for every page path: the console routes in the browser) and its
 * assets. Without a built console, /console answers 404 saying how to build it.
 */
export function consoleRoutes(app: FastifyInstance, configuredDir?: string): void {
  const dir = consoleDir(configuredDir);
  const files = dir ? readFiles(dir) : new Map<string, ConsoleFile>();
  const index = files.get('index.html');
  const config = { public: true };
  const schema = { hide: true };
  const page = async (request: { headers: { 'if-none-match'?: string | undefined } }, reply: FastifyReply) => {
    if (!index) throw new GpufleetError('ROUTE_NOT_FOUND', 'The web console is not built here: run `npm run build` (npm ci does it), or set GPUFLEET_CONSOLE_DIR.');
    return send(reply, index, request.headers['if-none-match']);
  };
  app.get('/console', { config, schema }, page);
  app.get<{ Params: { '*': string } }>('/console/*', { config, schema }, async (request, reply) => {
    const rest = request.params['*'];
    // an asset (a name with an extension, at the top: the build writes no folders); else a page path
    if (/^[^/]+\.[a-z0-9]+$/i.test(rest)) {
      const file = files.get(rest);
      if (!file) throw new GpufleetError('ROUTE_NOT_FOUND', `The console has no file ${rest.slice(0, 80)}.`);
      return send(reply, file, request.headers['if-none-match']);
    }
    return page(request, reply);
  });
}
