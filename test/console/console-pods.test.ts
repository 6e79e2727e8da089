// The console in Chromium, as an operator and as a team's user: sign in (a wrong key shows the
// alert), enrol a test host from Fleet and watch its progress, create a pod from the form (the API's
// validation message shown at the field first), see it RUNNING, follow its log, run a command in its
// terminal, stop it from the list with the confirmation; a read key sees no mutating button and its
// forged request is refused. After sign-in the key is in no DOM node, field or storage, and no request
// but the exchange carries it; the cookie is HttpOnly, SameSite=Strict, host-only, and another site's
// form POST or link does not carry it; sign-out ends the
// session on the server. Every page is screenshotted and checked by axe-core (no serious/critical).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { axeViolations, keyLeftInBrowser, newPage, openConsoleWorld, shot, signIn, type ConsoleWorld } from './console-world.ts';
import { ensureTestImage } from '../harness/index.ts';

let w: ConsoleWorld;
let image: string;
let user: { accountId: string; key: string };

beforeAll(async () => {
  image = await ensureTestImage();
  w = await openConsoleWorld('console-pods');
  user = await w.cp.newAccount('read_write', 100);
});

afterAll(async () => {
  await w?.close();
});

async function checkAxe(page: Page, what: string) {
  expect(await axeViolations(page), `axe on ${what}`).toEqual([]);
}

test('a wrong key shows an alert; the operator signs in with Enter, the navigation has its five links, the key is nowhere in the page or other requests, another site\'s form or link carries no cookie, sign-out ends the session', async () => {
  const { context, page, errors } = await newPage(w.browser);
  await page.goto(`${w.cp.url}/console`);
  await expect.poll(() => page.getByLabel('API key', { exact: true }).count()).toBe(1);
  await checkAxe(page, 'sign-in');
  await page.getByLabel('API key', { exact: true }).fill('gf_not_a_real_key_000000000000');
  await page.getByRole('button', { name: 'Sign in' }).click();
  const alert = page.getByRole('alert');
  await expect.poll(() => alert.textContent(), { timeout: 10_000 }).toMatch(/^That API key was not accepted: /);
  await shot(page, '01-sign-in-wrong-key');

  // every request the page makes from here on, with its headers and body
  const sent: { url: string; method: string; text: string }[] = [];
  page.on('request', (r) => sent.push({ url: r.url(), method: r.method(), text: `${JSON.stringify(r.headers())} ${r.postData() ?? ''}` }));
  await signIn(page, w.cp.url, w.cp.adminKey);
  for (const name of ['Fleet', 'Pods', 'Serverless', 'Models', 'Teams']) expect(await page.getByRole('navigation').getByRole('link', { name, exact: true }).count(), name).toBe(1);
  expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(1);
  expect(await keyLeftInBrowser(page, w.cp.adminKey)).toEqual([]);
  // a reload keeps the session (the cookie), and still no request but the exchange carried the key
  await page.reload();
  await page.getByRole('navigation').getByRole('link', { name: 'Teams', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Teams' }).waitFor();
  const carriers = sent.filter((r) => r.text.includes(w.cp.adminKey)).map((r) => `${r.method} ${new URL(r.url).pathname}`);
  expect(carriers).toEqual(['POST /console/session']);
  expect(sent.length).toBeGreaterThan(5);
  // the cookie: HttpOnly, SameSite=Strict, host-only (no Domain attribute: Playwright shows the host itself)
  const cookies = await context.cookies();
  expect(cookies.map((c) => ({ name: c.name, httpOnly: c.httpOnly, sameSite: c.sameSite, domain: c.domain }))).toEqual([
    { name: 'gpufleet-session', httpOnly: true, sameSite: 'Strict', domain: new URL(w.cp.url).hostname },
  ]);
  // another site's page (localhost is not the site of 127.0.0.1): neither its form POST nor a link it
  // follows carries the cookie (SameSite=Strict): both reach the API unauthenticated (401, not a 403 CSRF refusal)
  const evil = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      req.url === '/form'
        ? `<form id="f" method="POST" enctype="text/plain" action="${w.cp.url}/v2/pods"><input name='{"name":"x","a":"' value='"}'></form><script>document.getElementById('f').submit()</script>`
        : `<a id="l" href="${w.cp.url}/console/session">go</a><script>document.getElementById('l').click()</script>`,
    );
  });
  await new Promise<void>((r) => evil.listen(0, '127.0.0.1', () => r()));
  const evilPort = (evil.address() as AddressInfo).port;
  try {
    for (const path of ['/form', '/link']) {
      // the navigation the other site makes, not a request the console page still had in flight as it was left
      const answer = page.waitForResponse((r) => r.url().startsWith(w.cp.url) && r.request().isNavigationRequest(), { timeout: 10_000 });
      await page.goto(`http://localhost:${evilPort}${path}`);
      const res = await answer;
      expect(res.status(), path).toBe(401);
      expect(((await res.request().allHeaders()) as Record<string, string>).cookie, path).toBeUndefined();
    }
  } finally {
    evil.close();
  }
  await page.goto(`${w.cp.url}/console/pods`);
  await page.getByRole('navigation').getByRole('link', { name: 'Pods', exact: true }).waitFor();
  // sign-out ends the session on the server: the same cookie, sent again, opens nothing
  const cookie = `${cookies[0]!.name}=${cookies[0]!.value}`;
  expect((await fetch(`${w.cp.url}/console/session`, { headers: { cookie } })).status).toBe(200);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('API key', { exact: true }).waitFor();
  expect((await fetch(`${w.cp.url}/console/session`, { headers: { cookie } })).status).toBe(401);
  await context.close();
  expect(errors.filter((e) => !/401|Failed to load resource/.test(e))).toEqual([]);
});

test('the operator enrols the test host from Fleet and sees its progress and its GPUs, drains and undrains it, creates a read key (shown once) and revokes it', async () => {
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, w.cp.adminKey);
  await page.getByRole('link', { name: 'Fleet', exact: true }).click();
  await page.getByText('Enrol a host').click();
  await page.getByLabel('SSH address').fill(`root@${w.host.address}:${w.host.port}`);
  await page.getByLabel('Private key').fill(w.host.privateKey);
  await page.getByLabel('Data center').fill('dc-console');
  await page.getByRole('button', { name: 'Enrol', exact: true }).click();
  const progress = page.getByRole('list', { name: 'Enrolment progress' });
  await expect.poll(() => progress.textContent(), { timeout: 60_000 }).toMatch(/enrolled: /);
  await expect.poll(() => page.getByRole('table', { name: /GPUs of/ }).count(), { timeout: 10_000 }).toBe(1);
  expect(await page.getByRole('table', { name: /GPUs of/ }).textContent()).toMatch(/H100/);
  expect(await page.getByLabel('Private key').inputValue()).toBe('');
  await shot(page, '02-fleet');
  await checkAxe(page, 'fleet');
  // drain asks first, then the host shows it; undrain puts it back
  await page.getByRole('button', { name: 'Drain', exact: true }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Yes, drain' }).click();
  await expect.poll(() => page.getByRole('article').textContent(), { timeout: 10_000 }).toMatch(/drained/);
  await page.getByRole('button', { name: 'Undrain', exact: true }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Yes, undrain' }).click();
  await page.getByRole('button', { name: 'Drain', exact: true }).waitFor({ timeout: 10_000 });

  // Teams: a key created with a scope is shown once, then hidden; revoking asks first
  await page.getByRole('link', { name: 'Teams', exact: true }).click();
  await page.getByLabel('Key name').fill('ci-reader');
  await page.getByLabel('Scope').selectOption('read');
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = page.getByLabel('New API key');
  await expect.poll(() => secret.textContent(), { timeout: 10_000 }).toMatch(/^gf_/);
  const key = (await secret.textContent())!;
  expect((await w.cp.api('/v2/account', { key })).status).toBe(200);
  await shot(page, '09-teams-key-created');
  await checkAxe(page, 'teams');
  await page.getByRole('button', { name: 'Done, hide it' }).click();
  expect(await keyLeftInBrowser(page, key)).toEqual([]);
  const row = page.getByRole('row', { name: /ci-reader/ });
  expect(await row.textContent()).toMatch(/read/);
  await row.getByRole('button', { name: 'Revoke' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Yes, revoke' }).click();
  await expect.poll(() => row.textContent(), { timeout: 10_000 }).toMatch(/revoked/);
  expect((await w.cp.api('/v2/account', { key })).status).toBe(401);
  await context.close();
}, 180_000);

test('a user creates a pod: the API\'s message shows at the field, then the pod is RUNNING, its log follows, its terminal runs a command, Stop from the list asks first; a pod from a template takes its image', async () => {
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, user.key);
  await page.getByRole('link', { name: 'Pods', exact: true }).click();
  await page.getByRole('link', { name: 'Create pod' }).click();
  await page.getByLabel('Name').fill('web-1');
  await page.getByLabel('Image').fill('bad image name');
  await page.getByLabel('GPU type').selectOption('NVIDIA H100 80GB HBM3');
  await page.getByRole('button', { name: 'Create pod' }).click();
  // the API's own validation message, at the Image field (aria-invalid, described by the message)
  const imageField = page.getByLabel('Image');
  await expect.poll(() => imageField.getAttribute('aria-invalid'), { timeout: 10_000 }).toBe('true');
  const describedBy = (await imageField.getAttribute('aria-describedby'))!.split(' ').pop()!;
  expect(await page.locator(`[id="${describedBy}"]`).textContent()).toMatch(/\S/);
  await shot(page, '03-pod-create-invalid');
  await checkAxe(page, 'pod create');

  await imageField.fill(image);
  await page.getByLabel('Start command').fill(`sh -c 'echo hello-from-console; trap "exit 0" TERM; sleep 3600 & wait'`);
  await page.getByLabel('Disk (GB)').fill('1');
  await page.getByRole('button', { name: 'Create pod' }).click();
  await page.waitForURL(/\/console\/pods\/[^/]+$/, { timeout: 10_000 });
  const heading = page.getByRole('heading', { level: 1 });
  await expect.poll(() => heading.textContent(), { timeout: 60_000 }).toMatch(/web-1\s*RUNNING/);
  // the log follows (the container's echo)
  await expect.poll(() => page.getByRole('log', { name: 'Pod log' }).textContent(), { timeout: 30_000 }).toMatch(/hello-from-console/);
  await shot(page, '04-pod-page-logs');
  await checkAxe(page, 'pod page');
  // the page's own action buttons, named for the actions
  for (const name of ['Stop', 'Restart', 'Terminate']) expect(await page.getByRole('button', { name, exact: true }).count(), name).toBe(1);

  await page.getByRole('tab', { name: 'Terminal' }).click();
  await page.getByRole('button', { name: 'Open terminal' }).click();
  // the terminal (xterm.js, test/console/console-terminal.test.ts tries it further) has the keyboard once connected
  await expect.poll(() => page.getByRole('region', { name: 'Terminal' }).getByRole('status').textContent(), { timeout: 20_000 }).toMatch(/^Connected: /);
  await page.keyboard.type('echo $((6*7)) from-$(hostname)\n');
  await expect.poll(() => page.locator('.xterm-rows').innerText(), { timeout: 20_000 }).toMatch(/42 from-/);
  await shot(page, '05-pod-terminal');
  await checkAxe(page, 'terminal');
  await page.getByRole('button', { name: 'Close terminal' }).click();

  // the list: the name and the status word as text; Stop on its row asks first, then the list shows the change live
  await page.getByRole('link', { name: 'Pods', exact: true }).click();
  const row = page.getByRole('row', { name: /web-1/ });
  await expect.poll(() => row.textContent(), { timeout: 10_000 }).toMatch(/RUNNING/);
  await shot(page, '06-pods-list');
  await checkAxe(page, 'pods list');
  await row.getByRole('button', { name: 'Stop', exact: true }).click();
  const dialog = page.getByRole('dialog');
  expect(await dialog.getByRole('heading').textContent()).toBe('Stop pod web-1?');
  await shot(page, '07-confirm-stop');
  await dialog.getByRole('button', { name: 'Yes, stop' }).click();
  await expect.poll(() => row.textContent(), { timeout: 30_000 }).toMatch(/EXITED/);
  expect(await row.getByRole('button', { name: 'Start', exact: true }).count()).toBe(1);
  expect(await keyLeftInBrowser(page, user.key)).toEqual([]);

  // from a template: the form starts from it (?template=), the pod takes the template's image
  const tpl = (await (await w.cp.api('/v2/templates', { key: user.key, method: 'POST', json: { name: 'idle-box', image, args: 'sleep 3600', disk: 1 } })).json()) as { id: string };
  await page.goto(`${w.cp.url}/console/pods/new?template=${tpl.id}`);
  await expect.poll(() => page.getByLabel('Template').inputValue(), { timeout: 10_000 }).toBe(tpl.id);
  await page.getByLabel('Name').fill('from-template');
  await page.getByLabel('GPU type').selectOption('NVIDIA H100 80GB HBM3');
  await page.getByRole('button', { name: 'Create pod' }).click();
  await page.waitForURL(/\/console\/pods\/[^/]+$/, { timeout: 10_000 });
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 10_000 }).toMatch(/from-template/);
  expect(await page.locator('dl.facts').textContent()).toContain(image);
  await context.close();
}, 240_000);

test('a read key sees pods but no mutating button: no Create, no Start/Stop/Restart/Terminate, no terminal', async () => {
  const reader = await w.cp.newAccount('read', 10);
  // the reader's own pod, made through the API with a read_write key of the same account is not possible here: the operator's pods are not the reader's,
  // so the reader's account gets a pod by an admin key of that account
  const admin = await (await w.cp.api('/v2/keys', { method: 'POST', json: { accountId: reader.accountId, name: 'rw', scope: 'read_write' } })).json() as { key: string };
  const made = await w.cp.api('/v2/pods', { key: admin.key, method: 'POST', json: { name: 'seen-1', image, args: 'sleep 3600', disk: 1, gpu: { id: 'NVIDIA H100 80GB HBM3' } } });
  expect(made.status).toBe(201);
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, reader.key);
  await page.getByRole('link', { name: 'Pods', exact: true }).click();
  const row = page.getByRole('row', { name: /seen-1/ });
  await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
  await expect.poll(() => row.textContent(), { timeout: 60_000 }).toMatch(/RUNNING/);
  for (const name of ['Create pod', 'Start', 'Stop', 'Restart', 'Terminate']) expect(await page.getByRole('button', { name, exact: true }).count() + (await page.getByRole('link', { name, exact: true }).count()), name).toBe(0);
  await row.getByRole('link', { name: 'seen-1' }).click();
  await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 10_000 }).toMatch(/seen-1/);
  for (const name of ['Start', 'Stop', 'Restart', 'Terminate']) expect(await page.getByRole('button', { name, exact: true }).count(), name).toBe(0);
  expect(await page.getByRole('tab', { name: 'Terminal' }).count()).toBe(0);
  await shot(page, '08-read-key-pod');
  // a request forged from the page with its own session and CSRF token is refused by the server all the same
  const podId = ((await made.json()) as { id: string }).id;
  const forged = await page.evaluate(`(async () => {
    const s = await (await fetch('/console/session')).json();
    const r = await fetch('/v2/pods/${podId}/action', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrfToken }, body: JSON.stringify({ action: 'stop' }) });
    return { status: r.status, scope: s.scope };
  })()`);
  expect(forged).toEqual({ status: 403, scope: 'read' });
  await context.close();
}, 120_000);
