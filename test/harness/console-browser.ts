// The web console in a real browser, for tests and bench/console.ts: the console built from console/
// into a temporary folder (as `npm ci` builds dist/console), Debian's Chromium driven by
// playwright-core (no browser is downloaded), sign-in, screenshots under test-results/console/
// (gitignored), axe-core injected from node_modules (never a CDN), and a search for the key.
import { mkdtemp, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { execFile } from 'node:child_process';
import { REPO_ROOT } from './control-plane.ts';

export const SHOTS = path.join(REPO_ROOT, 'test-results/console');
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];

let built: Promise<string> | undefined;

/** the console bundle, built once per test process into a folder of its own (never dist/, which other builds replace) */
export function builtConsole(): Promise<string> {
  built ??= (async () => {
    const dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'gpufleet-console-')), 'console');
    // as npm's prepare runs it (bin/ is not a layer the harness imports)
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, [path.join(REPO_ROOT, 'bin/build-console.js'), dir], { timeout: 120_000 }, (err, _out, stderr) => (err ? reject(new Error(`bin/build-console.js failed: ${stderr || err.message}`)) : resolve())),
    );
    return dir;
  })();
  return built;
}

/** Debian's Chromium; `extraArgs` e.g. a --host-resolver-rules for the pod port proxy's names */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: [...CHROMIUM_FLAGS, ...extraArgs] });
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
  await page.getByLabel('API key', { exact: true }).fill(key);
  await page.getByLabel('API key', { exact: true }).press('Enter');
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
