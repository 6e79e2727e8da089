// GET /console serves the built console (bin/build-console.js) with a strict Content-Security-Policy
// (nothing from another origin, no inline script or style, no framing): index.html for every page
// path, hashed assets cached for a year, an unknown asset 404 problem+json; without a built console,
// /console says how to build it. Public: no key needed, none asked.
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { builtConsole } from '../harness/console-browser.ts';
import { CONSOLE_CSP } from '../../api/console/console-files.ts';

let cp: TestControlPlane;
let bare: TestControlPlane;

beforeAll(async () => {
  cp = await startTestControlPlane({ config: { consoleDir: await builtConsole() } });
  bare = await startTestControlPlane({ config: { consoleDir: await mkdtemp(path.join(os.tmpdir(), 'gpufleet-no-console-')) } });
}, 120_000);

afterAll(async () => {
  await cp?.close();
  await bare?.close();
});

test('/console and every page path answer index.html with the strict CSP, no key needed; its script and stylesheet are same-origin hashed files cached for a year', async () => {
  for (const p of ['/console', '/console/', '/console/pods', '/console/serverless/abc123?x=1']) {
    const res = await cp.api(p, { key: null });
    expect(res.status, p).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-cache');
  }
  expect(CONSOLE_CSP).toMatch(/default-src 'none'/);
  expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
  const html = await (await cp.api('/console', { key: null })).text();
  // nothing from another origin: every src/href is a same-origin path (or the empty data: icon)
  const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  expect(refs.length).toBeGreaterThanOrEqual(2);
  for (const r of refs) expect(r, r).toMatch(/^(\/console\/[\w.-]+|data:,)$/);
  expect(html).not.toMatch(/<script>(?!<)/); // no inline script
  const js = refs.find((r) => r.endsWith('.js'))!;
  const asset = await cp.api(js, { key: null });
  expect(asset.status).toBe(200);
  expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
  expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  const etag = asset.headers.get('etag')!;
  expect((await cp.api(js, { key: null, headers: { 'if-none-match': etag } })).status).toBe(304);
  const body = await asset.text();
  // the bundle loads nothing by URL from elsewhere (no CDN): no import of an absolute URL, no fetch of one
  expect(body).not.toMatch(/import\s*\(?\s*["']https?:/);
  expect(body).not.toMatch(/fetch\(\s*["']https?:/);
});

test('an unknown asset is a 404 problem+json; without a built console /console says how to build it', async () => {
  const missing = await cp.api('/console/app-NOTTHERE.js', { key: null });
  expect(missing.status).toBe(404);
  expect(missing.headers.get('content-type')).toMatch(/application\/problem\+json/);
  const none = await bare.api('/console', { key: null });
  expect(none.status).toBe(404);
  expect(((await none.json()) as { detail: string }).detail).toMatch(/npm run build/);
});
