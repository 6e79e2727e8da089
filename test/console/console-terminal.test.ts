// The pod's terminal in Chromium (xterm.js on an exec session with a TTY, docs/console.md
// "Terminal"), against a real pod on an sshd test host: `tty` names a /dev/pts device; `stty size`
// prints the rows and columns the page shows, and new ones after the browser window is resized;
// Ctrl-C ends a `sleep 30` and the shell prompt answers again within a few seconds; `exit 3` shows
// "exit code 3" and Reconnect opens a new shell; Escape then Tab leaves the terminal while Tab alone
// goes to the shell; no Content-Security-Policy violation on the way; axe finds nothing serious;
// `printf` of a red escape renders in xterm's red (a span of class xterm-fg-1). Leaving the tab while
// the terminal is still opening (the ticket held until the tab is left): the WebSocket that opens
// after is closed by the page, and the server records that session's end (client closed). index.html preloads the
// chunk the entry shares with the terminal's (a served <link rel="modulepreload">). A read key sees no
// terminal, and its ticket is refused by the server.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { axeViolations, newPage, openConsoleWorld, shot, signIn, type ConsoleWorld } from './console-world.ts';
import { enrolTestHost, ensureTestImage } from '../harness/index.ts';
import { waitFor } from '../harness/wait-for.ts';

let w: ConsoleWorld;
let user: { accountId: string; key: string };
let podId = '';

beforeAll(async () => {
  const image = await ensureTestImage();
  w = await openConsoleWorld('console-terminal');
  await enrolTestHost(w.cp, w.host, { dataCenterId: 'dc-terminal' });
  user = await w.cp.newAccount('read_write', 100);
  const made = await w.cp.api('/v2/pods', { key: user.key, method: 'POST', json: { name: 'term-1', image, args: `sh -c 'trap "exit 0" TERM; sleep 3600 & wait'`, disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3' } } });
  expect(made.status).toBe(201);
  podId = ((await made.json()) as { id: string }).id;
  await waitFor('pod RUNNING', async () => ((await (await w.cp.api(`/v2/pods/${podId}`, { key: user.key })).json()) as { status: string }).status === 'RUNNING', 90_000, 200);
}, 180_000);

afterAll(async () => {
  await w?.close();
});

/** the text the terminal shows now, a line per row (xterm's DOM rows) */
const screenText = (page: Page) => page.locator('.xterm-rows').innerText();

/** waits until the terminal shows `re`; the screen in the failure */
async function sees(page: Page, re: RegExp, timeout = 15_000): Promise<string> {
  let last = '';
  await waitFor(`the terminal to show ${re}`, async () => re.test((last = await screenText(page))), timeout, 100).catch((e: Error) => {
    throw new Error(`${e.message}; it shows:\n${last}`);
  });
  return last;
}

/** the keyboard is in the terminal (its input, xterm's helper textarea, has focus); page code as text: no DOM types here */
const terminalFocused = (page: Page) => page.evaluate("document.activeElement?.classList.contains('xterm-helper-textarea') === true");

/** types `stty size` until the terminal shows `rows cols` (docker exec -t passes a size on a moment after it is asked) */
async function sttySize(page: Page, size: { cols: number; rows: number }): Promise<void> {
  const re = new RegExp(`^${size.rows} ${size.cols}$`, 'm');
  let last = '';
  await waitFor(`stty size to print ${size.rows} ${size.cols}`, async () => {
    await page.keyboard.type('clear; stty size\n');
    await new Promise((r) => setTimeout(r, 300));
    return re.test((last = await screenText(page)));
  }, 15_000, 0).catch((e: Error) => {
    throw new Error(`${e.message}; it shows:\n${last}`);
  });
}

/** the "C columns × R rows" the page shows */
async function shownSize(page: Page): Promise<{ cols: number; rows: number }> {
  const m = /(\d+) columns × (\d+) rows/.exec((await page.getByRole('region', { name: 'Terminal' }).textContent()) ?? '');
  if (!m) throw new Error('no size shown');
  return { cols: Number(m[1]), rows: Number(m[2]) };
}

test('a TTY shell: tty, stty size following the window, Ctrl-C, exit 3 then Reconnect, Escape-Tab leaves, no CSP violation, axe', async () => {
  const { context, page, errors } = await newPage(w.browser);
  await signIn(page, w.cp.url, user.key);
  await page.goto(`${w.cp.url}/console/pods/${podId}`);
  // each refusal by the page's Content-Security-Policy, with what was refused, as an error of the page
  await page.evaluate(`document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation', e.effectiveDirective, e.sourceFile, e.lineNumber, e.target && e.target.outerHTML ? e.target.outerHTML.slice(0, 200) : ''))`);
  await page.getByRole('tab', { name: 'Terminal' }).click();
  await page.getByRole('button', { name: 'Open terminal' }).click();
  const status = page.getByRole('region', { name: 'Terminal' }).getByRole('status');
  await expect.poll(() => status.textContent(), { timeout: 20_000 }).toMatch(/^Connected: /);
  // the keys go to the terminal's own input (focused on open); it is described by how to leave it
  const input = page.locator('.xterm-helper-textarea');
  expect(await terminalFocused(page)).toBe(true);
  expect(await page.locator(`[id="${await input.getAttribute('aria-describedby')}"]`).textContent()).toMatch(/Escape, then Tab/);

  await page.keyboard.type('tty\n');
  await sees(page, /^\/dev\/pts\/\d+$/m);
  // colours: SGR 31 is drawn in the palette's red (the command line itself shows `red-%s`, not `red-7`)
  await page.keyboard.type("printf '\\033[31mred-%s\\033[0m\\n' 7\n");
  await expect.poll(() => page.locator('.xterm-rows span.xterm-fg-1', { hasText: 'red-7' }).count(), { timeout: 10_000 }).toBeGreaterThan(0);

  const first = await shownSize(page);
  await sttySize(page, first);
  await shot(page, '20-terminal');
  expect(await axeViolations(page), 'axe on the terminal').toEqual([]);

  // a smaller window: the terminal refits, and the pod's terminal is told
  await page.setViewportSize({ width: 900, height: 700 });
  await expect.poll(async () => (await shownSize(page)).cols, { timeout: 5_000 }).toBeLessThan(first.cols);
  const second = await shownSize(page);
  expect(second.rows).toBeLessThan(first.rows);
  await sttySize(page, second);

  // Ctrl-C reaches the process: the prompt is back well before the sleep would end
  await page.keyboard.type('clear; echo sleep-$((1+1)); sleep 30\n');
  await sees(page, /^sleep-2$/m);
  const t0 = Date.now();
  await page.keyboard.press('Control+c');
  await page.keyboard.type('echo back-$((40+2))\n');
  await sees(page, /^back-42$/m, 10_000);
  expect(Date.now() - t0).toBeLessThan(10_000);

  // Tab alone goes to the shell (focus stays); Escape then Tab leaves the terminal
  await page.keyboard.press('Tab');
  expect(await terminalFocused(page)).toBe(true);
  await page.keyboard.press('Escape');
  await page.keyboard.press('Tab');
  expect(await terminalFocused(page)).toBe(false);
  expect(await page.evaluate('document.activeElement?.textContent')).toBe('Close terminal');
  // back in: a click focuses it again
  await page.locator('.terminal-screen').click();
  expect(await terminalFocused(page)).toBe(true);

  // the exit code shows, then Reconnect opens a new shell
  await page.keyboard.type('exit 3\n');
  await expect.poll(() => status.textContent(), { timeout: 10_000 }).toBe('Session ended: exit code 3.');
  await sees(page, /\[Session ended: exit code 3\.\]/);
  await shot(page, '21-terminal-exit');
  await page.getByRole('button', { name: 'Reconnect' }).click();
  await expect.poll(() => status.textContent(), { timeout: 20_000 }).toMatch(/^Connected: /);
  await page.keyboard.type('echo again-$((2*3))\n');
  await sees(page, /^again-6$/m);
  await page.getByRole('button', { name: 'Close terminal' }).click();
  await expect.poll(() => status.textContent(), { timeout: 10_000 }).toMatch(/^Session ended: /);

  // nothing the page did was refused by its Content-Security-Policy (Chromium logs each refusal as an error)
  expect(errors.filter((e) => /Content Security Policy|CSP violation/i.test(e))).toEqual([]);
  await context.close();
}, 120_000);

/** the pod's exec sessions still open: each pod.exec_start the server recorded without its pod.exec_end */
async function openSessions(id: string): Promise<number> {
  const ev = (await (await w.cp.api(`/v2/events?resourceId=${id}`, { key: user.key })).json()) as { events: { type: string }[] };
  return ev.events.filter((e) => e.type === 'pod.exec_start').length - ev.events.filter((e) => e.type === 'pod.exec_end').length;
}

test('leaving the tab while the terminal opens: the session that opens after is closed at once (pod.exec_end, client closed)', async () => {
  await waitFor('the first test\'s sessions ended', async () => (await openSessions(podId)) === 0, 15_000, 200);
  const before = (await (await w.cp.api(`/v2/events?resourceId=${podId}`, { key: user.key })).json()) as { events: unknown[] };
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, user.key);
  await page.goto(`${w.cp.url}/console/pods/${podId}`);
  await page.getByRole('tab', { name: 'Terminal' }).click();
  // the ticket is held until the Terminal tab is gone (its panel unmounted, "Opening…" still shown)
  await page.route(`**/v2/pods/${podId}/exec/ticket`, async (route) => {
    await page.getByRole('tab', { name: 'Logs' }).click();
    await route.continue();
  });
  const opened = page.waitForEvent('websocket', { predicate: (ws) => ws.url().includes('/exec/ws'), timeout: 20_000 });
  await page.getByRole('button', { name: 'Open terminal' }).click();
  const ws = await opened;
  expect(await page.getByRole('region', { name: 'Terminal' }).count()).toBe(0);
  // the page closes it as it arrives (before: it stayed open until the host's idle timeout)
  if (!ws.isClosed()) await ws.waitForEvent('close', { timeout: 10_000 });
  // the server opened it (one more pod.exec_start) and has ended it: client closed, not the idle timeout
  await waitFor('the session ended on the server', async () => (await openSessions(podId)) === 0, 10_000, 200);
  const after = (await (await w.cp.api(`/v2/events?resourceId=${podId}`, { key: user.key })).json()) as { events: { type: string; reason: string }[] };
  const added = after.events.slice(before.events.length);
  expect(added.map((e) => e.type)).toEqual(['pod.exec_start', 'pod.exec_end']);
  expect(added[1]!.reason).toMatch(/^exec session ended \(client closed\)/);
  await context.close();
}, 60_000);

test('index.html preloads the chunk the entry shares with the lazy ones, and it is served', async () => {
  const html = await (await fetch(`${w.cp.url}/console`)).text();
  const links = [...html.matchAll(/<link rel="modulepreload" href="(\/console\/[^"]+\.js)">/g)].map((m) => m[1]!);
  expect(links.length).toBeGreaterThan(0);
  for (const href of links) expect((await fetch(`${w.cp.url}${href}`)).status).toBe(200);
});

test('a read key sees no terminal, and a ticket asked with its session is refused', async () => {
  const reader = await w.cp.newAccount('read', 10);
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, reader.key);
  const rw = (await (await w.cp.api('/v2/keys', { method: 'POST', json: { accountId: reader.accountId, name: 'rw', scope: 'read_write' } })).json()) as { key: string };
  const made = await w.cp.api('/v2/pods', { key: rw.key, method: 'POST', json: { name: 'read-1', image: await ensureTestImage(), args: 'sleep 3600', disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3' } } });
  const id = ((await made.json()) as { id: string }).id;
  await page.goto(`${w.cp.url}/console/pods/${id}`);
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 10_000 }).toMatch(/read-1/);
  expect(await page.getByRole('tab', { name: 'Terminal' }).count()).toBe(0);
  const forged = await page.evaluate(`(async () => {
    const s = await (await fetch('/console/session')).json();
    const r = await fetch('/v2/pods/${id}/exec/ticket', { method: 'POST', headers: { 'x-csrf-token': s.csrfToken } });
    return r.status;
  })()`);
  expect(forged).toBe(403);
  await context.close();
}, 60_000);
