// client/ is browser-safe (a console will use it): esbuild bundles client/index.ts for the browser
// platform, where every Node module (node:*, ws, …) is unresolvable, and the bundle names neither
// `process` without a typeof guard nor `Buffer` nor `require`.
import { build } from 'esbuild';
import path from 'node:path';
import { expect, test } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

test('client/index.ts bundles for the browser: no Node module, no Buffer, no require', async () => {
  const out = await build({
    entryPoints: [path.join(ROOT, 'client/index.ts')],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    write: false,
    logLevel: 'silent',
    // a Node built-in fails the build here (esbuild cannot resolve it for the browser)
  });
  expect(out.errors).toEqual([]);
  const code = out.outputFiles[0]!.text;
  expect(code).not.toMatch(/\bBuffer\b/);
  expect(code).not.toMatch(/\brequire\(/);
  expect(code).not.toMatch(/from ["']node:|from ["']ws["']/);
  // process only behind `typeof process`
  expect(code.replace(/typeof process\s*===\s*["']undefined["']\s*\?\s*\{\}\s*:\s*process\.env/g, '')).not.toMatch(/\bprocess\b/);
  // the exports a console needs are there
  const mod = (await import(`data:text/javascript;base64,${Buffer.from(code).toString('base64')}`)) as Record<string, unknown>;
  for (const name of ['ApiClient', 'PodsApi', 'EndpointsApi', 'JobsApi', 'TemplatesApi', 'NetworkVolumesApi', 'RegistriesApi', 'PublicEndpointsApi', 'CatalogApi', 'BillingApi', 'EventsApi', 'AccountApi', 'AccountsApi', 'PodExecSocket'])
    expect(typeof mod[name], name).toBe('function');
});
