// What the console does with running pods, in Chromium against a real control plane with the pod
// port proxy (GPUFLEET_PROXY_DOMAIN) and a real sshd test host: a pod's HTTP port is a link whose
// click opens the pod's own server in a new tab (through a signed link, as docs/connect.md says a
// browser must), and its TCP port is shown as host:port text; Diagnose on Fleet shows the diagnosis;
// the keyboard claims docs/console.md makes (a skip link first, the heading takes focus on
// navigation, every focus stop visibly outlined, arrow keys move between tabs, the confirmation is
// a modal dialog that Escape closes without acting and that gives focus back); and bulk Stop of two
// selected pods, confirmed, leaves both EXITED. The live list: with a filter, an event reads only its
// pod (no list read again); a list answer older than an event's does not undo it (the race made to
// happen by holding the list's answer until the event was applied).
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { axeViolations, newPage, openConsoleWorld, shot, signIn, type ConsoleWorld } from './console-world.ts';
import { enrolTestHost, ensureTestImage } from '../harness/index.ts';
import { ensurePortServerImage } from '../harness/worker-images.ts';
import { port80Relay, proxyResolverRule, type Port80Relay } from '../harness/port80-relay.ts';
import { waitFor } from '../harness/wait-for.ts';
import { podPortProxy } from '../../gateway/index.ts';

type J = Record<string, any>;
const GPU = 'NVIDIA H100 80GB HBM3';
const DOMAIN = 'pods.gpufleet-console.test';

let w: ConsoleWorld;
let relay: Port80Relay;
let user: { accountId: string; key: string };
let web: J;
let idle: J;

async function runningPod(json: J): Promise<J> {
  const res = await w.cp.api('/v2/pods', { method: 'POST', key: user.key, json });
  const made = (await res.json()) as J;
  expect(res.status, JSON.stringify(made)).toBe(201);
  return waitFor(`pod ${json.name} RUNNING`, async () => {
    const p = (await (await w.cp.api(`/v2/pods/${made.id}`, { key: user.key })).json()) as J;
    return p.status === 'RUNNING' ? p : null;
  }, 90_000);
}

beforeAll(async () => {
  const [portImage, image] = await Promise.all([ensurePortServerImage(), ensureTestImage()]);
  let cpUrl = '';
  relay = await port80Relay(() => cpUrl);
  w = await openConsoleWorld('console-pod-actions', {
    mounts: [podPortProxy()],
    config: { proxyDomain: DOMAIN, proxyScheme: 'http' },
    browserArgs: [proxyResolverRule(DOMAIN, relay)],
  });
  cpUrl = w.cp.url;
  await enrolTestHost(w.cp, w.host, { dataCenterId: 'dc-console-actions' });
  user = await w.cp.newAccount('read_write', 100);
  [web, idle] = await Promise.all([
    runningPod({ name: 'notebook', image: portImage, disk: 1, gpu: { id: GPU, count: 1 }, ports: ['8888/http', '9000/tcp'], env: { PORT: '8888' } }),
    runningPod({ name: 'idle-box', image, args: 'sleep 3600', disk: 1, gpu: { id: GPU, count: 1 } }),
  ]);
}, 300_000);

afterAll(async () => {
  await w?.close();
  await relay?.close();
});

const podPage = async (page: Page, pod: J) => {
  await page.getByRole('link', { name: 'Pods', exact: true }).click();
  await page.getByRole('row', { name: new RegExp(pod.name as string) }).getByRole('link', { name: pod.name as string }).click();
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 10_000 }).toMatch(/RUNNING/);
};

test("a pod's HTTP port is a link that opens the pod's own server in a new tab; its TCP port is host:port text", async () => {
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, user.key);
  await podPage(page, web);
  const ports = page.getByRole('list', { name: 'Ports' });
  const http = (web.runtime.ports as J[]).find((p) => p.private === 8888)!;
  const tcp = (web.runtime.ports as J[]).find((p) => p.private === 9000)!;
  expect(http.url).toBe(`http://${web.id}-8888.${DOMAIN}`);
  const link = ports.getByRole('link', { name: new RegExp(`^8888/http`) });
  expect(await link.getAttribute('href')).toBe(http.url);
  // the TCP port: no link, its address as text (the host's address and the published port)
  expect(tcp.url).toBeNull();
  expect(await ports.getByRole('link').count()).toBe(1);
  const tcpItem = ports.getByRole('listitem').filter({ hasText: '9000/tcp' });
  expect(await tcpItem.textContent()).toBe(tcp.ip && tcp.public ? `9000/tcp: ${tcp.ip}:${tcp.public}` : '9000/tcp (no public address)');
  await shot(page, '21-pod-ports');
  expect(await axeViolations(page)).toEqual([]);

  // the click: a new tab on the port's own name (the signed link traded for the port's cookie, the token off the URL)
  const [tab] = await Promise.all([context.waitForEvent('page'), link.click()]);
  await tab.waitForURL(`${http.url}/`, { timeout: 20_000 });
  // the tab's cookie opens the pod's server: its /echo shows the request it got, with no gpufleet cookie
  const answer = await tab.goto(`${http.url}/echo`);
  expect(answer?.status()).toBe(200);
  const seen = JSON.parse((await tab.textContent('body'))!) as J;
  expect(seen.url).toBe('/echo');
  expect(String(seen.headers.cookie ?? '')).not.toMatch(/gpufleet/);
  expect(seen.headers.host).toBe(`${web.id}-8888.${DOMAIN}`);
  expect((await context.cookies(http.url as string)).map((c) => c.name)).toEqual(['gpufleet-port']);
  await tab.close();
  await context.close();
}, 120_000);

test('Diagnose on Fleet shows the diagnosis: passed, the method, each GPU with its summary and health', async () => {
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, w.cp.adminKey);
  await page.getByRole('link', { name: 'Fleet', exact: true }).click();
  await page.getByRole('button', { name: 'Diagnose', exact: true }).click();
  const result = page.getByRole('region', { name: /^Diagnosis of / });
  await expect.poll(() => result.count(), { timeout: 30_000 }).toBe(1);
  expect(await result.getByRole('heading').textContent()).toBe('Diagnosis: passed (driver-check)');
  const rows = result.getByRole('table').getByRole('row');
  expect(await rows.count()).toBe(3);
  for (const i of [0, 1]) expect(await rows.nth(i + 1).textContent()).toMatch(new RegExp(`^${i}passed.+HEALTHY$`));
  await shot(page, '22-fleet-diagnosis');
  expect(await axeViolations(page)).toEqual([]);
  await context.close();
}, 60_000);

/** what has focus now: its tag, role, text, and whether its outline is drawn */
const focused = (page: Page) =>
  page.evaluate(`(() => {
    const el = document.activeElement;
    const s = getComputedStyle(el);
    return { tag: el.tagName, role: el.getAttribute('role'), text: (el.textContent || '').trim().slice(0, 40), outline: s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2, inDialog: !!el.closest('dialog') };
  })()`) as Promise<{ tag: string; role: string | null; text: string; outline: boolean; inDialog: boolean }>;

test('the keyboard: the heading has focus on load, Shift+Tab reaches the navigation and the skip link, the heading takes focus on navigation, every focus stop is visibly outlined, arrow keys move between tabs, the confirmation is a modal dialog Escape closes', async () => {
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, user.key);
  await page.goto(`${w.cp.url}/console/pods`);
  await page.getByRole('row', { name: /idle-box/ }).waitFor();
  // on load the page's heading has focus; the next Tab is the page's first control, and going back
  // (Shift+Tab) passes the top bar and the navigation to the skip link, every stop outlined
  await expect.poll(() => focused(page)).toMatchObject({ tag: 'H1', text: 'Pods' });
  await page.keyboard.press('Tab');
  expect(await focused(page)).toMatchObject({ tag: 'BUTTON', text: 'Refresh', outline: true });
  const back: string[] = [];
  for (let i = 0; i < 12 && !back.at(-1)?.startsWith('Skip'); i++) {
    await page.keyboard.press('Shift+Tab');
    const f = await focused(page);
    if (f.tag === 'H1') continue;
    expect(f.outline, `${f.tag} ${f.text}`).toBe(true);
    back.push(f.text);
  }
  expect(back).toEqual(expect.arrayContaining(['Fleet', 'Pods', 'Serverless', 'Models', 'Teams']));
  expect(back.at(-1)).toMatch(/^Skip/);
  // the skip link leads the next Tab into the page's content
  await page.keyboard.press('Enter');
  await page.keyboard.press('Tab');
  expect(await page.evaluate("!!document.activeElement.closest('main')")).toBe(true);
  // navigation gives the page's heading focus (a screen reader hears where it is)
  await page.getByRole('navigation').getByRole('link', { name: 'Serverless', exact: true }).click();
  await expect.poll(() => focused(page)).toMatchObject({ tag: 'H1', text: 'Serverless' });
  await page.getByRole('navigation').getByRole('link', { name: 'Pods', exact: true }).click();
  await expect.poll(() => focused(page)).toMatchObject({ tag: 'H1', text: 'Pods' });
  // every stop of the Tab order through the pods page is outlined (:focus-visible), to its end (where
  // the browser's own controls take over and the page's body is the active element)
  const stops: string[] = [];
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    const f = await focused(page);
    if (f.tag === 'BODY') break;
    expect(f.outline, `stop ${i}: ${f.tag} ${f.text}`).toBe(true);
    stops.push(f.text || f.tag);
  }
  // the filters, both rows' checkbox, name link and actions
  expect(stops.length).toBeGreaterThanOrEqual(14);
  expect(stops).toEqual(expect.arrayContaining(['Refresh', 'Create pod', 'notebook', 'idle-box', 'Stop', 'Restart', 'Terminate']));

  // the pod page's tabs: arrow keys move the selection and the focus, wrapping at the ends
  await podPage(page, idle);
  const tab = (name: string) => page.getByRole('tab', { name, exact: true });
  await tab('Logs').focus();
  await page.keyboard.press('ArrowRight');
  expect(await focused(page)).toMatchObject({ role: 'tab', text: 'Terminal', outline: true });
  expect(await tab('Terminal').getAttribute('aria-selected')).toBe('true');
  expect(await page.getByRole('tabpanel').getAttribute('aria-labelledby')).toBe(await tab('Terminal').getAttribute('id'));
  await page.keyboard.press('ArrowRight');
  expect(await focused(page)).toMatchObject({ role: 'tab', text: 'Events' });
  await page.keyboard.press('ArrowRight');
  expect(await focused(page)).toMatchObject({ role: 'tab', text: 'Logs' });
  await page.keyboard.press('ArrowLeft');
  expect(await focused(page)).toMatchObject({ role: 'tab', text: 'Events' });
  // only the selected tab is in the Tab order
  expect(await page.getByRole('tab').evaluateAll((els) => els.map((e) => e.getAttribute('tabindex')))).toEqual(['-1', '-1', '0']);

  // the confirmation: a modal dialog that takes focus; Escape closes it, nothing is done, focus returns to the button
  const stop = page.locator('.page-head').getByRole('button', { name: 'Stop', exact: true });
  await stop.focus();
  await page.keyboard.press('Enter');
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  expect(await dialog.evaluate((d) => (d as unknown as { matches(s: string): boolean }).matches(':modal'))).toBe(true);
  expect(await focused(page)).toMatchObject({ inDialog: true, outline: true });
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  expect(await focused(page)).toMatchObject({ tag: 'BUTTON', text: 'Stop' });
  expect(((await (await w.cp.api(`/v2/pods/${idle.id}`, { key: user.key })).json()) as J).status).toBe('RUNNING');
  await context.close();
}, 120_000);

/** a pod action through the API (another client), then its status once it is `want` */
async function actAndWait(pod: J, action: string, want: string): Promise<void> {
  const res = await w.cp.api(`/v2/pods/${pod.id}/action`, { method: 'POST', key: user.key, json: { action } });
  expect(res.status, await res.clone().text()).toBe(200);
  await waitFor(`pod ${pod.name} ${want}`, async () => ((await (await w.cp.api(`/v2/pods/${pod.id}`, { key: user.key })).json()) as J).status === want, 60_000);
}

const isList = (url: URL) => url.pathname === '/v2/pods';

test('with a filter, an event about a pod reads that pod alone: a pod leaving the filter leaves the list, one entering it comes in, and the list is never read again', async () => {
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, user.key);
  await page.goto(`${w.cp.url}/console/pods?status=RUNNING`);
  const row = page.getByRole('row', { name: /idle-box/ });
  await row.waitFor({ timeout: 10_000 });
  await page.getByRole('row', { name: /notebook/ }).waitFor();
  const reads: string[] = [];
  page.on('request', (r) => {
    if (r.method() === 'GET' && new URL(r.url()).pathname.startsWith('/v2/pods')) reads.push(new URL(r.url()).pathname);
  });
  await actAndWait(idle, 'stop', 'EXITED');
  await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(0);
  await actAndWait(idle, 'start', 'RUNNING');
  await expect.poll(() => row.textContent(), { timeout: 10_000 }).toMatch(/RUNNING/);
  expect(await page.getByRole('row', { name: /notebook/ }).count()).toBe(1);
  expect(reads.filter((path) => path === '/v2/pods')).toEqual([]);
  expect(reads.length).toBeGreaterThan(0);
  expect(new Set(reads)).toEqual(new Set([`/v2/pods/${idle.id}`]));
  await context.close();
}, 180_000);

test('a list read before a pod stopped but answered after the pod\'s own read does not put the old status back (the list answer held until the event was applied)', async () => {
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, user.key);
  await page.getByRole('link', { name: 'Pods', exact: true }).click();
  const row = page.getByRole('row', { name: /idle-box/ });
  await expect.poll(() => row.textContent(), { timeout: 10_000 }).toMatch(/RUNNING/);
  // the next list read: sent to the server at once (so it reads the pod RUNNING), its answer held
  let held: { release(): Promise<void>; body: string } | undefined;
  const fetched = new Promise<void>((resolve) =>
    page.route(isList, async (route) => {
      const response = await route.fetch();
      const body = await response.text();
      held = { body, release: () => route.fulfill({ response, body }) };
      resolve();
    }),
  );
  await page.getByRole('button', { name: 'Refresh', exact: true }).click();
  await fetched;
  const stale = JSON.parse(held!.body) as J[] | { pods: J[] };
  expect((Array.isArray(stale) ? stale : stale.pods).find((p) => p.id === idle.id)?.status).toBe('RUNNING');
  expect(await page.getByRole('table', { name: 'Pods' }).getAttribute('aria-busy')).toBe('true');
  // the pod stops; its event makes the page read it, and the row shows EXITED
  await actAndWait(idle, 'stop', 'EXITED');
  await expect.poll(() => row.textContent(), { timeout: 10_000 }).toMatch(/EXITED/);
  // now the older list answer arrives; once the page has taken it, the row still says EXITED
  await held!.release();
  await expect.poll(() => page.getByRole('table', { name: 'Pods' }).getAttribute('aria-busy'), { timeout: 10_000 }).toBe('false');
  expect(await row.textContent()).toMatch(/EXITED/);
  expect(await row.getByRole('button', { name: 'Start', exact: true }).count()).toBe(1);
  await page.unroute(isList);
  await actAndWait(idle, 'start', 'RUNNING');
  await context.close();
}, 180_000);

test('bulk actions: two selected pods stopped with one confirmation, both EXITED in the list', async () => {
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, user.key);
  await page.getByRole('link', { name: 'Pods', exact: true }).click();
  for (const p of [web, idle]) {
    await expect.poll(() => page.getByRole('row', { name: new RegExp(p.name as string) }).textContent(), { timeout: 10_000 }).toMatch(/RUNNING/);
    await page.getByLabel(`Select ${p.name}`).check();
  }
  const bulk = page.getByRole('region', { name: 'Bulk actions' });
  expect(await bulk.textContent()).toMatch(/^2 selected/);
  await bulk.getByRole('button', { name: 'Stop selected' }).click();
  const dialog = page.getByRole('dialog');
  expect(await dialog.getByRole('heading').textContent()).toBe('Stop 2 selected pods?');
  expect(await dialog.textContent()).toMatch(/notebook, idle-box|idle-box, notebook/);
  await shot(page, '23-bulk-stop-confirm');
  await dialog.getByRole('button', { name: 'Yes, stop' }).click();
  for (const p of [web, idle]) await expect.poll(() => page.getByRole('row', { name: new RegExp(p.name as string) }).textContent(), { timeout: 30_000 }).toMatch(/EXITED/);
  expect(await page.getByRole('region', { name: 'Bulk actions' }).count()).toBe(0);
  for (const p of [web, idle]) expect(((await (await w.cp.api(`/v2/pods/${p.id}`, { key: user.key })).json()) as J).status).toBe('EXITED');
  await shot(page, '24-bulk-stopped');
  await context.close();
}, 120_000);
