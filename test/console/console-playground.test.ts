// The Playground in Chromium against a real endpoint whose worker (the Node test worker image) runs on
// an sshd test host: the endpoint's page is reached from its name; the estimated cost shows before
// sending; the generated code follows the Input's edits and calls the origin in the address bar with
// $RUNPOD_API_KEY; runsync and run show the output with delay, execution and cost, and streamed
// chunks; then each generated snippet (cURL in sh, Python with runpod-python, JavaScript with
// runpod-sdk) run outside the browser gets the same result as the page showed: /runsync, /run and
// /status; /stream prints the chunks the page showed, /cancel cancels the page's queued job.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Page } from 'playwright-core';
import { axeViolations, keyLeftInBrowser, newPage, openConsoleWorld, shot, signIn, type ConsoleWorld } from './console-world.ts';
import { runSnippet, type SnippetLanguage } from './snippet-runners.ts';
import { dockerBridgeGateway, enrolTestHost } from '../harness/index.ts';
import { ensureNodeWorkerImage } from '../harness/worker-images.ts';

let w: ConsoleWorld;
let user: { accountId: string; key: string };
let endpointId = '';

beforeAll(async () => {
  const image = await ensureNodeWorkerImage();
  // the workers reach the control plane on the Docker bridge, so the browser does too: plain HTTP to a
  // name that is not loopback, which a private test fleet allows (docs/console.md)
  w = await openConsoleWorld('console-playground', { host: await dockerBridgeGateway(), config: { consoleAllowHttp: true } });
  await enrolTestHost(w.cp, w.host, { dataCenterId: 'dc-playground' });
  user = await w.cp.newAccount('read_write', 100);
  const tpl = (await (await w.cp.api('/v2/templates', { key: user.key, method: 'POST', json: { name: 'node-worker', image, disk: 1, serverless: true } })).json()) as { id: string };
  const ep = await w.cp.api('/v1/endpoints', {
    key: user.key,
    method: 'POST',
    json: { templateId: tpl.id, name: 'echo-endpoint', gpuTypeIds: ['NVIDIA H100 80GB HBM3'], workersMin: 1, workersMax: 1, idleTimeout: 60 },
  });
  expect(ep.status).toBe(200);
  endpointId = ((await ep.json()) as { id: string }).id;
}, 300_000);

afterAll(async () => {
  if (endpointId) await w?.cp.api(`/v1/endpoints/${endpointId}`, { key: user.key, method: 'DELETE' }).catch(() => undefined);
  await w?.close();
});

const codeOf = (page: Page) => page.getByTestId('code').textContent().then((t) => t ?? '');

async function showCode(page: Page, lang: 'cURL' | 'Python' | 'JavaScript', op: string): Promise<string> {
  await page.getByLabel('Operation').selectOption(`${op}`);
  await page.getByRole('tab', { name: lang, exact: true }).click();
  return codeOf(page);
}

const LANGS: [SnippetLanguage, 'cURL' | 'Python' | 'JavaScript'][] = [
  ['curl', 'cURL'],
  ['python', 'Python'],
  ['javascript', 'JavaScript'],
];

test('the playground: code follows the Input, runsync and run show the output, and every generated snippet gets the same result', async () => {
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, user.key);
  await page.getByRole('link', { name: 'Serverless', exact: true }).click();
  await page.getByRole('link', { name: 'echo-endpoint' }).click();
  await page.getByRole('tab', { name: 'Playground' }).waitFor();
  expect(await page.getByRole('tab', { name: 'Playground' }).getAttribute('aria-selected')).toBe('true');
  // the estimate, before anything is sent
  await expect.poll(() => page.locator('.estimate').textContent(), { timeout: 10_000 }).toMatch(/\$\d+\.\d+ per second of execution on/);

  const input = page.getByLabel('Input', { exact: true });
  const body = { input: { prompt: 'from the console', n: 7 } };
  await input.fill(JSON.stringify(body, null, 2));
  // the code follows the edit, calls the origin in the address bar, and reads the key without setting it
  const origin = new URL(page.url()).origin;
  const curlRunsync = await showCode(page, 'cURL', 'runsync');
  expect(curlRunsync).toContain(`${origin}/v2/${endpointId}/runsync`);
  expect(curlRunsync).toContain('"prompt":"from the console"');
  expect(curlRunsync).toContain('$RUNPOD_API_KEY');
  expect(curlRunsync).not.toContain(user.key);
  expect(curlRunsync).not.toMatch(/RUNPOD_API_KEY=/);
  await input.fill(JSON.stringify({ input: { prompt: 'edited', n: 8 } }));
  expect(await codeOf(page)).toContain('"prompt":"edited"');
  await input.fill(JSON.stringify(body, null, 2));

  // runsync from the page (the first may wait for the worker to start)
  await page.getByRole('button', { name: 'Send' }).click();
  const output = page.getByTestId('job-output');
  await expect.poll(() => output.textContent(), { timeout: 150_000 }).toMatch(/from the console/);
  const shown = JSON.parse((await output.textContent())!);
  expect(shown).toEqual({ echo: body.input });
  const result = page.getByRole('region', { name: 'Result' });
  expect(await result.textContent()).toMatch(/COMPLETED/);
  expect(await result.textContent()).toMatch(/Execution\d+ ms/);
  expect(await result.textContent()).toMatch(/Cost\$\d/);
  await shot(page, '10-playground-runsync');
  expect(await axeViolations(page)).toEqual([]);

  // run, with streamed chunks
  await page.getByLabel('run (queue, then follow)').check();
  const streamed = { input: { stream: ['one', 'two', 'three'], stream_delay_ms: 200 } };
  await input.fill(JSON.stringify(streamed));
  await page.getByRole('button', { name: 'Send' }).click();
  await expect.poll(async () => (await result.textContent()) ?? '', { timeout: 60_000 }).toMatch(/COMPLETED/);
  await expect.poll(() => page.getByRole('log', { name: 'Streamed chunks' }).textContent(), { timeout: 10_000 }).toBe('"one"\n"two"\n"three"');
  const runJobId = (await page.getByTestId('job-id').textContent())!;
  await shot(page, '11-playground-run-streamed');

  // each language's /runsync and /run code, run outside the browser, gets what the page showed
  await input.fill(JSON.stringify(body, null, 2));
  for (const [lang, label] of LANGS) {
    const code = await showCode(page, label, 'runsync');
    const out = (await runSnippet(lang, code, user.key)).trim();
    const got = lang === 'curl' ? (JSON.parse(out) as { output: unknown }).output : JSON.parse(out);
    expect(got, `${label} /runsync`).toEqual(shown);
  }
  for (const [lang, label] of LANGS) {
    const code = await showCode(page, label, 'run');
    const out = (await runSnippet(lang, code, user.key)).trim();
    if (lang === 'python') expect(JSON.parse(out.split('\n').pop()!), 'Python /run then output()').toEqual(shown);
    else expect((JSON.parse(out) as { status: string }).status, `${label} /run`).toMatch(/IN_QUEUE|IN_PROGRESS|COMPLETED/);
  }
  // /status of the page's job: the code names it, and each language reads COMPLETED, as the page shows
  for (const [lang, label] of LANGS) {
    const code = await showCode(page, label, 'status');
    expect(code).toContain(runJobId);
    const out = (await runSnippet(lang, code, user.key)).trim();
    expect(lang === 'curl' ? (JSON.parse(out) as { status: string; output: unknown }) : out, `${label} /status`).toEqual(lang === 'curl' ? expect.objectContaining({ id: runJobId, status: 'COMPLETED' }) : 'COMPLETED');
  }
  // /stream and /cancel name the same job; the stream was read by the page already, and the job is final
  for (const [, label] of LANGS) {
    expect(await showCode(page, label, 'stream'), `${label} /stream`).toContain(runJobId);
    expect(await showCode(page, label, 'cancel'), `${label} /cancel`).toContain(runJobId);
  }
  const curlCancel = await showCode(page, 'cURL', 'cancel');
  expect(await runSnippet('curl', curlCancel, user.key)).toMatch(/COMPLETED|already|409|final/i);
  await shot(page, '12-playground-code');

  // the other tabs render
  await page.getByRole('tab', { name: 'Requests' }).click();
  await expect.poll(() => page.getByRole('table', { name: 'Requests' }).textContent()).toContain(runJobId);
  await shot(page, '13-endpoint-requests');
  await page.getByRole('tab', { name: 'Workers' }).click();
  await expect.poll(() => page.getByRole('table', { name: 'Workers' }).count(), { timeout: 10_000 }).toBe(1);
  await shot(page, '14-endpoint-workers');
  expect(await axeViolations(page)).toEqual([]);
  await page.getByRole('tab', { name: 'Logs' }).click();
  await expect.poll(() => page.getByRole('log', { name: 'Logs of all workers' }).textContent(), { timeout: 20_000 }).toMatch(/\[/);
  await shot(page, '15-endpoint-logs');
  // the metrics: a chart per measure (from GET /v2/serverless/{id}/metrics), each with its numbers as a table
  await page.getByRole('tab', { name: 'Metrics' }).click();
  await expect.poll(() => page.locator('figure.chart canvas').count(), { timeout: 15_000 }).toBe(6);
  for (const title of ['Workers by state', 'Queue', 'Jobs finished', 'Delay (ms)', 'Execution (ms)', 'Cold start (ms)']) expect(await page.getByText(`${title} as a table`).count(), title).toBe(1);
  await shot(page, '16-endpoint-metrics');
  expect(await axeViolations(page)).toEqual([]);
  await page.getByRole('link', { name: 'Serverless', exact: true }).click();
  await page.getByRole('table', { name: 'Endpoints' }).waitFor();
  await shot(page, '17-serverless-list');
  expect(await axeViolations(page)).toEqual([]);
  expect(await keyLeftInBrowser(page, user.key)).toEqual([]);
  await context.close();
}, 400_000);

/** the job's status through the API, until `done` says so */
async function jobStatus(id: string, done: (status: string) => boolean): Promise<string> {
  let status = '';
  await expect
    .poll(async () => {
      status = ((await (await w.cp.api(`/v2/${endpointId}/status/${id}`, { key: user.key })).json()) as { status: string }).status;
      return done(status);
    }, { timeout: 60_000 })
    .toBe(true);
  return status;
}

/** the chunks a /stream snippet printed: cURL's one answer ({status, stream: [{output}]}), or a JSON line per chunk */
function chunksPrinted(lang: SnippetLanguage, out: string): unknown[] {
  if (lang === 'curl') return ((JSON.parse(out) as { stream?: { output: unknown }[] }).stream ?? []).map((c) => c.output);
  return out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown);
}

test("the /stream code prints the chunks the page showed, and the /cancel code cancels the page's queued job, in each language", async () => {
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, user.key);
  await page.goto(`${w.cp.url}/console/serverless/${endpointId}`);
  const input = page.getByLabel('Input', { exact: true });
  await input.waitFor();
  await page.getByLabel('run (queue, then follow)').check();
  const streamed = { input: { stream: ['alpha', { beta: 2 }, 3], stream_delay_ms: 100 } };
  await input.fill(JSON.stringify(streamed));
  await page.getByRole('button', { name: 'Send' }).click();
  const result = page.getByRole('region', { name: 'Result' });
  await expect.poll(async () => (await result.textContent()) ?? '', { timeout: 120_000 }).toMatch(/COMPLETED/);
  const log = page.getByRole('log', { name: 'Streamed chunks' });
  await expect.poll(() => log.textContent(), { timeout: 10_000 }).toBe('"alpha"\n{"beta":2}\n3');
  const shownChunks = ((await log.textContent()) ?? '').split('\n').map((l) => JSON.parse(l) as unknown);
  const pageJob = (await page.getByTestId('job-id').textContent())!;

  // the page read its job's chunks (each is handed out once), so each language's /stream code, as the
  // page shows it, runs against a fresh job of the same Input: the page's job id swapped for the new one
  for (const [lang, label] of LANGS) {
    const code = await showCode(page, label, 'stream');
    expect(code, `${label} /stream`).toContain(pageJob);
    const res = await w.cp.api(`/v2/${endpointId}/run`, { key: user.key, method: 'POST', json: streamed });
    const fresh = ((await res.json()) as { id: string }).id;
    await jobStatus(fresh, (s) => s === 'COMPLETED');
    const out = (await runSnippet(lang, code.split(pageJob).join(fresh), user.key)).trim();
    expect(chunksPrinted(lang, out), `${label} /stream`).toEqual(shownChunks);
  }

  // /cancel: a job that holds the one worker, so the page's next job waits in the queue; each
  // language's /cancel code (naming the page's job) cancels it, and the page shows CANCELLED
  const blocker = ((await (await w.cp.api(`/v2/${endpointId}/run`, { key: user.key, method: 'POST', json: { input: { sleep_ms: 300_000 } } })).json()) as { id: string }).id;
  await jobStatus(blocker, (s) => s === 'IN_PROGRESS');
  try {
    for (const [lang, label] of LANGS) {
      await input.fill(JSON.stringify({ input: { cancel_me: label } }));
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(async () => (await result.textContent()) ?? '', { timeout: 20_000 }).toMatch(/IN_QUEUE/);
      const queued = (await page.getByTestId('job-id').textContent())!;
      expect(queued).not.toBe(pageJob);
      const code = await showCode(page, label, 'cancel');
      expect(code, `${label} /cancel`).toContain(queued);
      const out = JSON.parse((await runSnippet(lang, code, user.key)).trim()) as { id?: string; status?: string };
      expect(out, `${label} /cancel`).toMatchObject({ id: queued, status: 'CANCELLED' });
      expect(await jobStatus(queued, () => true)).toBe('CANCELLED');
      await expect.poll(async () => (await result.textContent()) ?? '', { timeout: 20_000 }).toMatch(/CANCELLED/);
    }
    await shot(page, '25-playground-cancelled');
  } finally {
    await w.cp.api(`/v2/${endpointId}/cancel/${blocker}`, { key: user.key, method: 'POST' });
  }
  await context.close();
}, 300_000);

test('the Teams, Models and Fleet pages render for a team user without serious accessibility violations', async () => {
  const { context, page } = await newPage(w.browser);
  await signIn(page, w.cp.url, user.key);
  for (const [name, file] of [
    ['Teams', '18-teams'],
    ['Models', '19-models'],
    ['Fleet', '20-fleet-not-operator'],
  ] as const) {
    await page.getByRole('navigation').getByRole('link', { name, exact: true }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(name);
    await page.waitForTimeout(700);
    // the endpoint's worker time is billed: the cost-over-time chart of serverless usage
    if (name === 'Teams') {
      await page.getByLabel('Usage of').selectOption('endpoints');
      await expect.poll(() => page.getByText('Cost per hour (USD), last 2 days as a table').count(), { timeout: 10_000 }).toBe(1);
    }
    await shot(page, file);
    expect(await axeViolations(page), name).toEqual([]);
  }
  await context.close();
}, 60_000);
