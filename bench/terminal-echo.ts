// Keystroke to echo in the console's terminal (docs/console.md, "Terminal"), for bench/console.ts:
// a real pod on an sshd test host (the provisioner, the Docker engine), its terminal opened in
// Chromium, and `keys` keystrokes typed one at a time at the shell prompt (comment lines,
// `#q<n>qabc…`, so Enter runs nothing). Each is timed in the page from its keydown to the end of the frame in which
// the character shows on the screen (xterm.js renders in animation frames): the exec WebSocket, the SSH channel, `docker exec -t`, the pod's
// terminal echo and xterm.js's rendering. The baseline, in the same run: the same echo through
// client/'s PodExecSocket in Node (no browser, no rendering): the API's and the host's share.
import type { Browser } from 'playwright-core';
import WebSocket from 'ws';
import { ApiClient, PodsApi, type WebSocketLike } from '../client/index.ts';
import { startTestControlPlane } from '../test/harness/control-plane.ts';
import { newPage, signIn } from '../test/harness/console-browser.ts';
import { disposeHostWorld, enrolTestHost, ensureTestImage, FIXTURE_GPUS, startTestHost } from '../test/harness/index.ts';
import { waitFor } from '../test/harness/wait-for.ts';
import { provisioner } from '../provisioner/index.ts';

export interface EchoLatency {
  /** ms per keystroke, in the browser (keydown → painted) */
  browser: number[];
  /** ms per keystroke, client/ in Node (write → echoed byte) */
  node: number[];
}

const LINE = 40;

/** types `text` until `shown()` (2 s each time, 5 times at most) */
async function retypedUntil(text: string, shown: () => Promise<boolean>, type: (t: string) => Promise<void>): Promise<void> {
  for (let n = 0; n < 5; n++) {
    await type(text);
    const until = performance.now() + 2000;
    while (performance.now() < until) {
      if (await shown()) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  throw new Error(`${JSON.stringify(text)} never showed in the terminal`);
}

/** one comment line of `n` letters: `#` then the letters, each keystroke's screen text unique on a cleared screen */
const letters = (n: number, seed: number) => Array.from({ length: n }, (_, i) => String.fromCharCode(97 + ((i * 7 + seed) % 26))).join('');

export async function terminalEchoLatency(browser: Browser, consoleDir: string, keys: number): Promise<EchoLatency> {
  const image = await ensureTestImage();
  const host = await startTestHost({ name: `bench-term-${process.pid}`, gpus: [{ ...FIXTURE_GPUS.H100_80GB_HBM3 }] });
  const cp = await startTestControlPlane({ background: [provisioner()], reconcileIntervalMs: 300, config: { consoleDir } });
  let hostId: string | undefined;
  try {
    hostId = await enrolTestHost(cp, host, { dataCenterId: 'dc-bench-term' });
    const { key } = await cp.newAccount('read_write', 1000);
    const made = await cp.api('/v2/pods', { key, method: 'POST', json: { name: 'bench-term', image, args: `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`, disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3' } } });
    const podId = ((await made.json()) as { id: string }).id;
    await waitFor('pod RUNNING', async () => ((await (await cp.api(`/v2/pods/${podId}`, { key })).json()) as { status: string }).status === 'RUNNING', 120_000, 200);

    // the browser
    const { context, page } = await newPage(browser);
    await signIn(page, cp.url, key);
    await page.goto(`${cp.url}/console/pods/${podId}`);
    await page.getByRole('tab', { name: 'Terminal' }).click();
    await page.getByRole('button', { name: 'Open terminal' }).click();
    await page.getByRole('region', { name: 'Terminal' }).getByRole('status').filter({ hasText: /^Connected: / }).waitFor({ timeout: 30_000 });
    await page.evaluate(`(() => {
      const e = (window.__echo = { expect: null, t0: 0, samples: [] });
      document.addEventListener('keydown', () => { e.t0 = performance.now(); }, true);
      const rows = document.querySelector('.xterm-rows');
      new MutationObserver(() => {
        // t0 is 0 until this keystroke's keydown: text already there before it is not its echo
        if (e.expect === null || e.t0 === 0 || !rows.textContent.includes(e.expect)) return;
        const t0 = e.t0;
        e.expect = null;
        // xterm.js changes the rows in an animation frame; a task queued now runs after that frame is painted
        setTimeout(() => e.samples.push(performance.now() - t0), 0);
      }).observe(rows, { childList: true, subtree: true, characterData: true });
    })()`);
    const rowsText = () => page.locator('.xterm-rows').innerText();
    let done = 0;
    for (let line = 0; done < keys; line++) {
      // the line's own start, typed until it shows: a shell drops what is typed while it sets up its prompt
      const marker = `#q${line}q`;
      await retypedUntil(marker, async () => (await rowsText()).includes(marker), (t) => page.keyboard.type(t));
      const text = letters(LINE, line);
      for (let i = 0; i < text.length && done < keys; i++) {
        const expect = marker + text.slice(0, i + 1);
        await page.evaluate(`window.__echo.t0 = 0; window.__echo.expect = ${JSON.stringify(expect)}`);
        await page.keyboard.press(text[i]!);
        done++;
        // a function, not a string: the console's CSP (rightly) refuses eval
        await page.waitForFunction((n) => (globalThis as unknown as { __echo: { samples: unknown[] } }).__echo.samples.length >= n, done, { timeout: 10_000, polling: 5 }).catch(async (err: Error) => {
          throw new Error(`${err.message}: no echo of ${JSON.stringify(expect)}; the screen shows:\n${await rowsText()}`);
        });
      }
      await page.keyboard.press('Enter');
    }
    const browserMs = (await page.evaluate('window.__echo.samples')) as number[];
    await context.close();

    // the baseline: client/ in Node, a terminal session, one byte out, its echo back
    const pods = new PodsApi(new ApiClient({ url: cp.url, apiKey: key, webSocket: (url) => new WebSocket(url) as unknown as WebSocketLike }));
    let echoed: (() => void) | null = null;
    let seen = '';
    let want = '\u0000';
    const s = await pods.execSession(podId, ['sh'], { tty: true, cols: 200, rows: 50 }, {
      stdout: (d) => {
        seen += new TextDecoder().decode(d);
        if (echoed && seen.endsWith(want)) echoed();
      },
      stderr: () => undefined,
    });
    const nodeMs: number[] = [];
    for (let line = 0; nodeMs.length < keys; line++) {
      const marker = `#q${line}q`;
      seen = '';
      await retypedUntil(marker, async () => seen.includes(marker), async (t) => s.write(t));
      const text = letters(LINE, line);
      for (let i = 0; i < text.length && nodeMs.length < keys; i++) {
        want = marker + text.slice(0, i + 1);
        const t = performance.now();
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no echo of ${JSON.stringify(want)}: ${JSON.stringify(seen.slice(-200))}`)), 10_000);
          echoed = () => {
            clearTimeout(timer);
            resolve();
          };
          s.write(text[i]!);
        });
        echoed = null;
        nodeMs.push(performance.now() - t);
      }
      s.write('\n');
    }
    s.close();
    await s.ended.catch(() => undefined);
    return { browser: browserMs, node: nodeMs };
  } finally {
    await disposeHostWorld({ cp, host, hostId });
  }
}
