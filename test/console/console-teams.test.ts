// Teams' templates, network volumes and registry credentials, and an endpoint's Requests tab, in
// Chromium against a real control plane (no GPU host needed: the jobs' worker is the worker protocol
// over HTTP, as runpod-python's worker calls it). Teams: a template created with a bad image shows the
// API's message at the Image field, then created once fixed, and edited; a network volume created,
// then deleted only after its confirmation (Cancel first keeps it); a registry credential created and
// its password rotated; a read key sees no New, Edit or Delete. Requests: the history survives a
// reload and shows in another browser, a job sent by curl included; Cancel job on a queued job ends
// CANCELLED; Retry on a failed job queues it again (same id, retried 1×); Run again on a cancelled job
// sends a new job with its input; the status filter; Load more pages with the cursor. axe-core on Teams and Requests; screenshots.
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { axeViolations, builtConsole, launchChromium, newPage, shot, signIn, SHOTS } from '../harness/console-browser.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { startJobWorld, type JobWorld } from '../api/jobs/in-process-workers.ts';

const run = promisify(execFile);
let world: JobWorld;
let browser: Browser;

beforeAll(async () => {
  const consoleDir = await builtConsole();
  world = await startJobWorld({ config: { consoleDir } as never });
  await seedHosts(world.cp.services.store, [{ id: 'teams-host', gpus: 2, dataCenterId: 'dc-teams' }]);
  browser = await launchChromium();
  await mkdir(SHOTS, { recursive: true });
}, 180_000);
afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await world?.close();
});

type Json = Record<string, unknown>;
const api = async (path: string, key = world.user.key): Promise<{ status: number; body: Json }> => {
  const res = await world.cp.api(path, { key });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Json };
};

async function teams(page: Page): Promise<void> {
  await page.getByRole('navigation').getByRole('link', { name: 'Teams', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Teams' }).waitFor();
}

test('Teams: a template with a bad image shows the API message at the field, then is created and edited; a volume is deleted only after confirming; a registry credential is created and rotated', async () => {
  const { context, page, errors } = await newPage(browser);
  await signIn(page, world.cp.url, world.user.key);
  await teams(page);

  // a template: the API's validation message at the Image field, nothing created
  await page.getByRole('button', { name: 'New template' }).click();
  const form = page.getByRole('form', { name: 'New template' });
  await form.getByLabel('Template name').fill('web-tpl');
  await form.getByLabel('Image', { exact: true }).fill('-bad image');
  await form.getByRole('button', { name: 'Create template' }).click();
  const image = form.getByLabel('Image', { exact: true });
  await expect.poll(() => image.getAttribute('aria-invalid')).toBe('true');
  const describedBy = (await image.getAttribute('aria-describedby'))!.split(' ');
  const message = await page.locator(`[id="${describedBy.at(-1)}"]`).textContent();
  expect(message).toBeTruthy();
  expect((await page.getByRole('alert').first().textContent()) ?? '').toMatch(/VALIDATION_FAILED|BAD_REQUEST/);
  expect(((await api('/v2/templates')).body.templates as Json[]).some((t) => t.name === 'web-tpl')).toBe(false);
  await shot(page, 'teams-template-error');
  expect(await axeViolations(page), 'Teams with a field error').toEqual([]);

  // fixed: created, the form closes, the table shows it
  await image.fill('ubuntu:24.04');
  await form.getByLabel('Ports').fill('8888/http 22/tcp');
  await form.getByLabel('Environment').fill('MODE=dev');
  await form.getByRole('button', { name: 'Create template' }).click();
  await page.getByRole('table', { name: 'Templates' }).getByRole('cell', { name: 'web-tpl', exact: true }).waitFor();
  expect(await page.getByRole('form', { name: 'New template' }).count()).toBe(0);
  const tpl = ((await api('/v2/templates')).body.templates as Json[]).find((t) => t.name === 'web-tpl')!;
  expect(tpl).toMatchObject({ image: 'ubuntu:24.04', ports: ['8888/http', '22/tcp'], env: { MODE: 'dev' } });

  // edited: only the changed field is sent
  await page.getByRole('button', { name: 'Edit web-tpl' }).click();
  const edit = page.getByRole('form', { name: 'Edit template web-tpl' });
  expect(await edit.getByLabel('Image', { exact: true }).inputValue()).toBe('ubuntu:24.04');
  await edit.getByLabel('Start command').fill('sleep infinity');
  await edit.getByRole('button', { name: 'Save template' }).click();
  await expect.poll(async () => (await api(`/v2/templates/${String(tpl.id)}`)).body.args).toBe('sleep infinity');
  expect((await api(`/v2/templates/${String(tpl.id)}`)).body).toMatchObject({ image: 'ubuntu:24.04', env: { MODE: 'dev' } });

  // a network volume: created from the form, then Delete asks; Cancel keeps it, "Yes, delete" deletes it
  await page.getByRole('button', { name: 'New network volume' }).click();
  const vform = page.getByRole('form', { name: 'New network volume' });
  await vform.getByLabel('Volume name').fill('scratch');
  await vform.getByLabel('Size (GB)').fill('10');
  await vform.getByLabel('Data center').selectOption('dc-teams');
  await vform.getByRole('button', { name: 'Create network volume' }).click();
  await page.getByRole('table', { name: 'Network volumes' }).getByRole('cell', { name: 'scratch', exact: true }).waitFor();
  const volume = ((await api('/v2/network-volumes')).body.networkVolumes as Json[]).find((v) => v.name === 'scratch')!;
  expect(volume).toMatchObject({ size: 10, dataCenterId: 'dc-teams' });
  await page.getByRole('button', { name: 'Delete scratch' }).click();
  const dialog = page.getByRole('dialog');
  await expect.poll(() => dialog.getByRole('heading').textContent()).toBe('Delete the network volume scratch?');
  await shot(page, 'teams-volume-confirm');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  expect((await api(`/v2/network-volumes/${String(volume.id)}`)).status).toBe(200);
  await page.getByRole('button', { name: 'Delete scratch' }).click();
  await dialog.getByRole('button', { name: 'Yes, delete' }).click();
  await expect.poll(async () => (await api(`/v2/network-volumes/${String(volume.id)}`)).status).toBe(404);
  await expect.poll(() => page.getByRole('cell', { name: 'scratch', exact: true }).count()).toBe(0);

  // a registry credential: created, then its password rotated (never shown)
  await page.getByRole('button', { name: 'New registry credential' }).click();
  const rform = page.getByRole('form', { name: 'New registry credential' });
  await rform.getByLabel('Credential name').fill('ghcr-team');
  await rform.getByLabel('Username').fill('robot');
  await rform.getByLabel('Password or token').fill('first-secret');
  await rform.getByRole('button', { name: 'Create registry credential' }).click();
  await page.getByRole('table', { name: 'Registries' }).getByRole('cell', { name: 'ghcr-team', exact: true }).waitFor();
  const reg = ((await api('/v2/registries')).body.registries as Json[]).find((r) => r.name === 'ghcr-team')!;
  const before = (await world.cp.services.registries.credentials(world.user.accountId, String(reg.id)))!;
  expect(before).toMatchObject({ username: 'robot', password: 'first-secret' });
  await page.getByRole('button', { name: 'Edit ghcr-team' }).click();
  const redit = page.getByRole('form', { name: 'Edit registry credential ghcr-team' });
  expect(await redit.getByLabel('Password or token').inputValue()).toBe('');
  await redit.getByLabel('Password or token').fill('rotated-secret');
  await redit.getByRole('button', { name: 'Save registry credential' }).click();
  await expect.poll(async () => (await world.cp.services.registries.credentials(world.user.accountId, String(reg.id)))?.password).toBe('rotated-secret');
  expect((await world.cp.services.registries.credentials(world.user.accountId, String(reg.id)))?.username).toBe('robot');
  expect(await page.content()).not.toContain('rotated-secret');

  await shot(page, 'teams-resources');
  expect(await axeViolations(page), 'Teams').toEqual([]);
  expect(errors.filter((e) => !/Failed to load resource/.test(e))).toEqual([]);
  await context.close();
}, 120_000);

test('a read key sees templates, volumes and registries, with no New, Edit or Delete', async () => {
  const { key } = await world.cp.services.keys.createKey({ accountId: world.user.accountId, name: 'reader', scope: 'read' });
  const { context, page } = await newPage(browser);
  await signIn(page, world.cp.url, key);
  await teams(page);
  await page.getByRole('table', { name: 'Templates' }).waitFor();
  await page.getByRole('table', { name: 'Registries' }).waitFor();
  for (const name of [/^New /, /^Edit /, /^Delete /]) expect(await page.getByRole('button', { name }).count(), String(name)).toBe(0);
  await context.close();
}, 60_000);

// ---- Requests ----------------------------------------------------------------------------------

/** a job failed by a worker, through the worker protocol as runpod-python's worker sends it */
async function failedJob(endpointId: string): Promise<string> {
  const res = await world.cp.api(`/v2/${endpointId}/run`, { method: 'POST', key: world.user.key, json: { input: { n: 'fails' } } });
  const id = ((await res.json()) as { id: string }).id;
  const w = await world.directory.issue(endpointId);
  const base = `${world.cp.url}/v2/${endpointId}`;
  const take = await fetch(`${base}/job-take/${w.workerId}?gpu=x&job_in_progress=0`, { headers: { authorization: w.token } });
  expect(((await take.json()) as { id: string }).id).toBe(id);
  const done = await fetch(`${base}/job-done/${w.workerId}/${id}?isStream=false`, {
    method: 'POST',
    headers: { authorization: w.token, 'content-type': 'application/x-www-form-urlencoded' },
    body: JSON.stringify({ error: 'ValueError: bad input' }),
  });
  expect(done.status).toBe(200);
  return id;
}

/** a job sent by another client: curl, as the public docs show it */
async function curlJob(endpointId: string, input: unknown): Promise<string> {
  const { stdout } = await run('curl', ['-sS', '--fail-with-body', '-X', 'POST', `${world.cp.url}/v2/${endpointId}/run`, '-H', `Authorization: Bearer ${world.user.key}`, '-H', 'Content-Type: application/json', '-d', JSON.stringify({ input })]);
  return (JSON.parse(stdout) as { id: string }).id;
}

const row = (page: Page, jobId: string) => page.getByRole('table', { name: 'Requests' }).getByRole('row').filter({ hasText: jobId });

async function requests(page: Page, endpointId: string): Promise<void> {
  await page.goto(`${world.cp.url}/console/serverless/${endpointId}`);
  await page.getByRole('tab', { name: 'Requests' }).click();
  await page.getByRole('table', { name: 'Requests' }).waitFor();
}

test('Requests: the history from any client survives a reload and shows in another browser; Cancel job, Retry, Run again; the status filter', async () => {
  const ep = await world.newEndpoint();
  const failed = await failedJob(ep);
  const { context, page, errors } = await newPage(browser);
  await signIn(page, world.cp.url, world.user.key);
  await requests(page, ep);
  await expect.poll(() => row(page, failed).textContent()).toContain('FAILED');
  expect(await row(page, failed).textContent()).toContain('ValueError: bad input');

  // a job sent by curl while the page is open, then a reload: the page holds nothing of its own
  const queued = await curlJob(ep, { n: 'from curl' });
  await page.reload();
  await page.getByRole('tab', { name: 'Requests' }).click();
  await expect.poll(() => row(page, queued).textContent()).toContain('IN_QUEUE');
  const names = await page.getByRole('table', { name: 'Requests' }).getByRole('row').allTextContents();
  expect(names.findIndex((t) => t.includes(queued))).toBeLessThan(names.findIndex((t) => t.includes(failed))); // newest first
  // another browser (its own session) sees the same history
  const other = await newPage(browser);
  await signIn(other.page, world.cp.url, world.user.key);
  await requests(other.page, ep);
  await expect.poll(() => row(other.page, queued).textContent()).toContain('IN_QUEUE');
  await expect.poll(() => row(other.page, failed).textContent()).toContain('FAILED');
  await other.context.close();
  await shot(page, 'requests-history');
  expect(await axeViolations(page), 'Requests').toEqual([]);

  // Cancel job: asks, then CANCELLED
  await row(page, queued).getByRole('button', { name: 'Cancel job' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Yes, cancel job' }).click();
  await expect.poll(() => row(page, queued).textContent()).toContain('CANCELLED');
  expect((await api(`/v2/${ep}/status/${queued}`)).body.status).toBe('CANCELLED');
  expect(await row(page, queued).getByRole('button', { name: 'Cancel job' }).count()).toBe(0);

  // Retry: the failed job is queued again, the same id
  await row(page, failed).getByRole('button', { name: 'Retry' }).click();
  await expect.poll(() => row(page, failed).textContent()).toContain('IN_QUEUE');
  expect(await row(page, failed).textContent()).toContain('retried 1×');
  expect((await api(`/v2/${ep}/status/${failed}`)).body).toMatchObject({ status: 'IN_QUEUE', retries: 1 });

  // Run again: the cancelled job's input as a new job (the job interface retries FAILED and TIMED_OUT only)
  await row(page, queued).getByRole('button', { name: 'Run again' }).click();
  await expect.poll(() => page.getByRole('table', { name: 'Requests' }).getByRole('row').count()).toBe(4); // the header and three jobs
  const history = (await api(`/v2/serverless/${ep}/jobs?include=input`)).body.jobs as { id: string; status: string; input: unknown }[];
  expect(history).toHaveLength(3);
  expect(history[0]).toMatchObject({ status: 'IN_QUEUE', input: { n: 'from curl' } });
  expect(history[0]!.id).not.toBe(queued);

  // the status filter
  await page.getByLabel('Status').selectOption('CANCELLED');
  await expect.poll(() => page.getByRole('table', { name: 'Requests' }).getByRole('row').count()).toBe(2);
  expect(await row(page, queued).count()).toBe(1);
  await shot(page, 'requests-actions');
  expect(await axeViolations(page), 'Requests after actions').toEqual([]);
  expect(errors.filter((e) => !/Failed to load resource/.test(e))).toEqual([]);
  await context.close();
}, 120_000);

test('Requests for a read key: the history, no Cancel job, Retry or Run again', async () => {
  const ep = await world.newEndpoint();
  const failed = await failedJob(ep);
  const queued = await curlJob(ep, { n: 'q' });
  const { key } = await world.cp.services.keys.createKey({ accountId: world.user.accountId, name: 'reader-2', scope: 'read' });
  const { context, page } = await newPage(browser);
  await signIn(page, world.cp.url, key);
  await requests(page, ep);
  await expect.poll(() => row(page, queued).textContent()).toContain('IN_QUEUE');
  await expect.poll(() => row(page, failed).textContent()).toContain('FAILED');
  for (const name of ['Cancel job', 'Retry', 'Run again']) expect(await page.getByRole('button', { name }).count(), name).toBe(0);
  await context.close();
}, 60_000);

test('Requests pages with Load more (the route\'s cursor): 20 rows, then the rest, then no Load more', async () => {
  const ep = await world.newEndpoint();
  const ids: string[] = [];
  for (let i = 0; i < 23; i++) {
    const res = await world.cp.api(`/v2/${ep}/run`, { method: 'POST', key: world.user.key, json: { input: { i } } });
    ids.push(((await res.json()) as { id: string }).id);
  }
  const { context, page } = await newPage(browser);
  await signIn(page, world.cp.url, world.user.key);
  await requests(page, ep);
  const rows = page.getByRole('table', { name: 'Requests' }).getByRole('row');
  await expect.poll(() => rows.count()).toBe(21); // the header and a page of 20
  await page.getByRole('button', { name: 'Load more' }).click();
  await expect.poll(() => rows.count()).toBe(24);
  expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
  const shown = (await rows.allTextContents()).slice(1).map((t) => ids.find((id) => t.includes(id)));
  expect(new Set(shown).size).toBe(23);
  await context.close();
}, 60_000);

test('Requests from a server slower than the 3 s refresh: the list shows, and Load more\'s page is kept through the ticks', async () => {
  const ep = await world.newEndpoint();
  for (let i = 0; i < 23; i++) await world.cp.api(`/v2/${ep}/run`, { method: 'POST', key: world.user.key, json: { input: { i } } });
  const { context, page } = await newPage(browser);
  await signIn(page, world.cp.url, world.user.key);
  // every read of the history answers 4 s late (longer than the refresh period)
  await page.route(`**/v2/serverless/${ep}/jobs*`, async (route) => {
    const res = await route.fetch();
    await new Promise((r) => setTimeout(r, 4_000));
    await route.fulfill({ response: res });
  });
  await page.goto(`${world.cp.url}/console/serverless/${ep}`);
  await page.getByRole('tab', { name: 'Requests' }).click();
  const rows = page.getByRole('table', { name: 'Requests' }).getByRole('row');
  await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(21);
  await page.getByRole('button', { name: 'Load more' }).click();
  await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(24);
  // and it stays: the ticks after read the 23 shown again
  await new Promise((r) => setTimeout(r, 5_000));
  expect(await rows.count()).toBe(24);
  await context.close();
}, 90_000);
