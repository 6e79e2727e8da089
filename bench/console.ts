// The web console in Chromium (Debian's, driven by playwright-core), on this machine, against a real
// control plane with 1,000 pods (fake hosts, no provisioner: the pods stay as placed):
//   - first page usable after navigation: `goto /console/pods` until a control can be used: the
//     sign-in field in a browser with no session, and, signed in, the pods table with its first
//     rows (1,000 pods); floor ≤ 1.5 s each
//   - 1,000 pods rendered: a click on "Pods" until the list holds them all (aria-rowcount; past 200 rows
//     only the rows in view are in the page, console/src/ui/window-rows.ts) and the next frame is
//     painted, timed in the page; floor ≤ 0.5 s. Scrolling to the end until the last pod's row is
//     painted is printed beside it. The
//     same list fetched by Node (the API's share) is printed beside it as the baseline of the run.
//   - a state change visible: a pod stopped through the API (another client) until its row in the open
//     list shows the new status word; floor ≤ 2 s (the page follows GET /v2/events)
// Each is the median of ROUNDS runs.
//   - keystroke to echo in a pod's terminal (bench/terminal-echo.ts: a real pod on an sshd test host,
//     BENCH_TERMINAL_KEYS keystrokes, default 200), p50 and p99, printed beside the same echo through
//     client/ in Node as the baseline of the run; no floor (the issue names none)
//   npx tsx bench/console.ts
import { startTestControlPlane } from '../test/harness/control-plane.ts';
import { seedHosts } from '../test/harness/fake-hosts.ts';
import { builtConsole, launchChromium, newPage, signIn } from '../test/harness/console-browser.ts';
import { checkTarget } from './target.ts';
import { terminalEchoLatency } from './terminal-echo.ts';

const PODS = Number(process.env.BENCH_PODS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const TERMINAL_KEYS = Number(process.env.BENCH_TERMINAL_KEYS ?? 200);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;

async function main(): Promise<void> {
  const consoleDir = await builtConsole();
  const cp = await startTestControlPlane({ rateLimits: 'minute=100000000,hour=100000000,day=100000000', config: { consoleDir } });
  const browser = await launchChromium();
  let closing: Promise<void> | null = null;
  const closeCp = () => (closing ??= cp.close());
  try {
    await seedHosts(cp.services.store, Array.from({ length: Math.ceil(PODS / 8) + 1 }, (_, i) => ({ id: `bench-host-${i}`, gpus: 8 })));
    const { key } = await cp.newAccount('read_write', 1_000_000);
    const t0 = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < PODS; i += 25) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(25, PODS - i) }, async (_, j) => {
          const res = await cp.api('/v2/pods', { key, method: 'POST', json: { name: `bench-${i + j}`, image: 'ghcr.io/example/trainer:1', gpu: { id: 'NVIDIA H100 80GB HBM3' }, disk: 1 } });
          if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
          return ((await res.json()) as { id: string }).id;
        }),
      );
      ids.push(...batch);
    }
    console.log(`seeded ${PODS} pods in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    // first page usable after navigation
    const firstPage: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const { context, page } = await newPage(browser);
      const t = performance.now();
      await page.goto(`${cp.url}/console/pods`, { waitUntil: 'commit' });
      await Promise.race([page.getByLabel('API key', { exact: true }).waitFor(), page.getByRole('table', { name: 'Pods' }).waitFor()]);
      firstPage.push(performance.now() - t);
      await context.close();
    }

    // 1,000 pods rendered, after an in-app navigation
    const { context, page } = await newPage(browser);
    await signIn(page, cp.url, key);
    // first page usable when signed in (the session cookie): a new tab of the same browser opens the
    // pods page until its table is there with its first rows
    const firstSignedIn: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const tab = await context.newPage();
      const t = performance.now();
      await tab.goto(`${cp.url}/console/pods`, { waitUntil: 'commit' });
      await tab.locator('tr[data-pod-id]').first().waitFor();
      firstSignedIn.push(performance.now() - t);
      await tab.close();
    }
    const render: number[] = [];
    const api: number[] = [];
    const scrolled: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      await page.getByRole('navigation').getByRole('link', { name: 'Teams', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Teams' }).waitFor();
      // timed in the page: the click, a MutationObserver seeing the table hold all the pods (its
      // aria-rowcount; past 200 rows only those in view are in the page), then the next frame painted
      const ms = (await page.evaluate(`new Promise((resolve) => {
        const t = performance.now();
        const done = () => document.querySelector('table[aria-label="Pods"]')?.getAttribute('aria-rowcount') === '${PODS + 1}' && document.querySelector('tr[data-pod-id]');
        const obs = new MutationObserver(() => { if (done()) { obs.disconnect(); requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - t), 0)); } });
        obs.observe(document.getElementById('app'), { childList: true, subtree: true, attributes: true });
        [...document.querySelectorAll('nav a')].find((a) => a.textContent === 'Pods').click();
      })`)) as number;
      render.push(ms);
      // then to the end of the list: the last pod's row painted
      const end = (await page.evaluate(`new Promise((resolve) => {
        const t = performance.now();
        const last = () => [...document.querySelectorAll('tr[data-pod-id]')].some((r) => r.getAttribute('aria-rowindex') === '${PODS + 1}');
        const obs = new MutationObserver(() => { if (last()) { obs.disconnect(); requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - t), 0)); } });
        obs.observe(document.getElementById('app'), { childList: true, subtree: true });
        window.scrollTo(0, document.documentElement.scrollHeight);
        if (last()) { obs.disconnect(); resolve(0); }
      })`)) as number;
      scrolled.push(end);
      await page.evaluate('window.scrollTo(0, 0)');
      const a = performance.now();
      const res = await cp.api('/v2/pods', { key });
      await res.json();
      api.push(performance.now() - a);
    }

    // a state change visible in the open list after the API shows it
    const visible: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const id = ids[r]!;
      const row = page.locator(`tr[data-pod-id="${id}"]`);
      const before = (await row.locator('.status').textContent()) ?? '';
      const action = before === 'EXITED' ? 'start' : 'stop';
      const res = await cp.api(`/v2/pods/${id}/action`, { key, method: 'POST', json: { action } });
      const shown = ((await res.json()) as { status: string }).status;
      const t = performance.now();
      if (shown === before) throw new Error(`the API shows ${shown} after ${action}: no change to watch`);
      await page.waitForFunction(([sel, word]) => (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document.querySelector(sel)?.textContent === word, [`tr[data-pod-id="${id}"] .status`, shown] as const, { timeout: 10_000, polling: 'raf' });
      visible.push(performance.now() - t);
    }
    await context.close();

    console.log(`first page usable (no session: the sign-in form): ${firstPage.map((x) => x.toFixed(0)).join(', ')} ms`);
    console.log(`first page usable (signed in: the pods table, ${PODS} pods): ${firstSignedIn.map((x) => x.toFixed(0)).join(', ')} ms`);
    console.log(`${PODS} pods list rendered (click → painted): ${render.map((x) => x.toFixed(0)).join(', ')} ms; the API's list alone (Node fetch): ${api.map((x) => x.toFixed(0)).join(', ')} ms`);
    console.log(`scrolled to the end (the last pod's row painted): ${scrolled.map((x) => x.toFixed(0)).join(', ')} ms`);
    console.log(`state change visible after the API answered: ${visible.map((x) => x.toFixed(0)).join(', ')} ms`);
    checkTarget({ name: 'console first page usable after navigation (sign-in form)', value: median(firstPage) / 1000, op: '<=', floor: 1.5, unit: ' s' });
    checkTarget({ name: `console first page usable after navigation (signed in, ${PODS} pods)`, value: median(firstSignedIn) / 1000, op: '<=', floor: 1.5, unit: ' s' });
    checkTarget({ name: `console ${PODS} pods list rendered`, value: median(render) / 1000, op: '<=', floor: 0.5, unit: ' s' });
    checkTarget({ name: 'console state change visible after the API shows it', value: median(visible) / 1000, op: '<=', floor: 2, unit: ' s' });
    console.log(`baseline: the list's API share ${median(api).toFixed(0)} ms of ${median(render).toFixed(0)} ms (${(median(api) / median(render)).toFixed(2)}×)`);
    await closeCp();
    // the terminal: a control plane of its own, with a real host and pod
    const echo = await terminalEchoLatency(browser, consoleDir, TERMINAL_KEYS);
    const ms = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms`;
    console.log(`terminal keystroke to echo, in Chromium (keydown → painted), ${echo.browser.length} keys: ${ms(echo.browser)}`);
    console.log(`baseline: the same echo through client/ in Node (write → echoed byte), ${echo.node.length} keys: ${ms(echo.node)}`);
  } finally {
    await browser.close();
    await closeCp();
  }
}

await main();
