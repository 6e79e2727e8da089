// The browser tests' world: the console built from console/ into a temporary folder (as `npm ci`
// builds dist/console), a real control plane serving it at /console, a real sshd test host with
// GPUs, and Debian's Chromium driven by playwright-core (no browser is downloaded). Screenshots go
// under test-results/console/ (gitignored); axe-core is injected from node_modules, never a CDN.
import { mkdir, mkdtemp, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildConsole } from '../../bin/build-console.js';
import { REPO_ROOT, startTestControlPlane, type TestControlPlane, type TestControlPlaneOptions } from '../harness/control-plane.ts';
import { disposeHostWorld, FIXTURE_GPUS, startTestHost, type TestHost } from '../harness/index.ts';
import { provisioner } from '../../provisioner/index.ts';

export const SHOTS = path.join(REPO_ROOT, 'test-results/console');
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];

let built: Promise<string> | undefined;

/** the console bundle, built once per test process into a folder of its own (never dist/, which other builds replace) */
export function builtConsole(): Promise<string> {
  built ??= (async () => {
    const dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'gpufleet-console-')), 'console');
    await buildConsole(dir);
    return dir;
  })();
  return built;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS });
}

export interface ConsoleWorld {
  cp: TestControlPlane;
  host: TestHost;
  browser: Browser;
  close(): Promise<void>;
}

export async function openConsoleWorld(name: string, opts: TestControlPlaneOptions = {}): Promise<ConsoleWorld> {
  const consoleDir = await builtConsole();
  const host = await startTestHost({ name: `${name}-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }, { ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  const cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300, ...opts, config: { consoleDir, ...opts.config } });
  const browser = await launchChromium();
  await mkdir(SHOTS, { recursive: true });
  return {
    cp,
    host,
    browser,
    async close() {
      await browser.close().catch(() => undefined);
      const hosts = (await (await cp.api('/v2/hosts')).json().catch(() => ({ hosts: [] }))) as { hosts?: { id: string }[] };
      const hostId = hosts.hosts?.[0]?.id;
      await disposeHostWorld({ cp, host, hostId });
    },
  };
}

/** a page in a fresh context (its own cookies), console errors collected */
export async function newPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  return { context, page, errors };
}

export async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/console`);
  await page.getByLabel('API key').fill(key);
  await page.getByLabel('API key').press('Enter');
  await page.getByRole('navigation').getByRole('link', { name: 'Pods', exact: true }).waitFor({ timeout: 10_000 });
}

export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now (rule id: the first targets) */
export async function axeViolations(page: Page): Promise<string[]> {
  // evaluated through the DevTools protocol: the console's CSP (rightly) refuses an inline <script>
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(await axeSource);
  // page code as text: the test's own tsconfig has no DOM types
  const result = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] })")) as { violations: { id: string; impact: string; nodes: { target: string[] }[] }[] };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
}

/** the key in no DOM node's text or attribute, no form field's value, no storage */
export function keyLeftInBrowser(page: Page, key: string): Promise<string[]> {
  return page.evaluate(`(() => {
    const k = ${JSON.stringify(key)};
    const found = [];
    if (document.documentElement.outerHTML.includes(k)) found.push('DOM');
    for (const el of document.querySelectorAll('input, textarea')) if (el.value.includes(k)) found.push('field ' + el.id);
    for (const store of [localStorage, sessionStorage]) for (let i = 0; i < store.length; i++) if ((store.getItem(store.key(i)) ?? '').includes(k)) found.push('storage');
    if (document.cookie.includes(k)) found.push('document.cookie');
    return found;
  })()`);
}
