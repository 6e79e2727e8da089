// `gpufleet endpoints …` and `gpufleet jobs …` run as the real bin against a listening control plane
// whose endpoint is served by the TypeScript worker SDK in this process (test/api/jobs).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startJobWorld, type JobWorld } from '../api/jobs/in-process-workers.ts';
import { runCli } from './run-cli.ts';

let world: JobWorld;
let env: { url: string; key: string };

beforeAll(async () => {
  world = await startJobWorld();
  env = { url: world.cp.url, key: world.user.key };
});
afterAll(async () => world?.close());

const api = async (path: string, init: RequestInit & { json?: unknown } = {}) => {
  const res = await world.cp.api(path, { key: env.key, ...init });
  return { status: res.status, body: res.status === 204 ? undefined : ((await res.json()) as Record<string, unknown>) };
};

describe('gpufleet endpoints', () => {
  test('create, list, get, update, workers, delete: --json parses and matches the API', async () => {
    const created = await runCli(['endpoints', 'create', '--name', 'cli-ep', '--template', world.templateId, '--gpu', 'ADA_24', '--workers-max', '2', '--json'], env);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    const ep = JSON.parse(created.stdout) as Record<string, unknown> & { id: string };
    expect(ep).toMatchObject({ name: 'cli-ep', type: 'QUEUE', templateId: world.templateId });
    expect(ep).toEqual((await api(`/v2/serverless/${ep.id}`)).body);

    const list = await runCli(['endpoints', 'list', '--json'], env);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual((await api('/v2/serverless')).body?.endpoints);
    expect((JSON.parse(list.stdout) as { id: string }[]).map((e) => e.id)).toContain(ep.id);

    const got = await runCli(['endpoints', 'get', ep.id, '--json'], env);
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout)).toEqual((await api(`/v2/serverless/${ep.id}`)).body);

    const updated = await runCli(['endpoints', 'update', ep.id, '--name', 'cli-ep-2', '--json'], env);
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ id: ep.id, name: 'cli-ep-2' });
    expect((await api(`/v2/serverless/${ep.id}`)).body?.name).toBe('cli-ep-2');

    const workers = await runCli(['endpoints', 'workers', ep.id, '--json'], env);
    expect(workers.code).toBe(0);
    expect(JSON.parse(workers.stdout)).toEqual((await api(`/v2/serverless/${ep.id}/workers`)).body?.workers);

    const deleted = await runCli(['endpoints', 'delete', ep.id], env);
    expect(deleted.code).toBe(0);
    expect((await api(`/v2/serverless/${ep.id}`)).status).toBe(404);

    const again = await runCli(['endpoints', 'get', ep.id], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/HTTP 404/);
  }, 60_000);

  test('create without the required --template exits 2 and sends nothing', async () => {
    const before = (await api('/v2/serverless')).body?.endpoints as unknown[];
    const r = await runCli(['endpoints', 'create', '--name', 'no-template'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--template/);
    expect((await api('/v2/serverless')).body?.endpoints).toHaveLength(before.length);
  }, 30_000);
});

describe('gpufleet jobs', () => {
  let endpointId: string;
  beforeAll(async () => {
    endpointId = await world.newEndpoint();
    await world.startWorker(endpointId);
  });

  test('run --sync prints the COMPLETED job with the output the worker returned, exit 0', async () => {
    const r = await runCli(['jobs', 'run', endpointId, '--input', '{"output":{"answer":42}}', '--sync', '--json'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const job = JSON.parse(r.stdout) as { id: string; status: string; output: unknown };
    expect(job).toMatchObject({ status: 'COMPLETED', output: { answer: 42 } });
    expect((await api(`/v2/${endpointId}/status/${job.id}`)).body).toMatchObject({ id: job.id, status: 'COMPLETED', output: { answer: 42 } });

    const status = await runCli(['jobs', 'status', endpointId, job.id, '--json'], env);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ id: job.id, status: 'COMPLETED', output: { answer: 42 } });
  }, 60_000);

  test('run --sync of a job that FAILED exits 1 and prints its error', async () => {
    const r = await runCli(['jobs', 'run', endpointId, '--input', '{"fail":"boom from the handler"}', '--sync'], env);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/ FAILED/);
    expect(r.stderr).toContain('boom from the handler');
  }, 60_000);

  test('run --stream prints each stream chunk in order, then the final status', async () => {
    const r = await runCli(['jobs', 'run', endpointId, '--input', '{"stream":["a","b","c"],"stream_delay_ms":50}', '--stream'], env);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.slice(0, 3)).toEqual(['"a"', '"b"', '"c"']);
    expect(lines[3]).toMatch(/ COMPLETED$/);
  }, 60_000);

  test('jobs stream without -f prints the chunks there are and exits; -f follows to the end and prints the final status', async () => {
    const queued = JSON.parse((await runCli(['jobs', 'run', endpointId, '--input', '{"stream":["x","y","z"],"stream_delay_ms":5000}', '--json'], env)).stdout) as { id: string };
    // the worker streams a chunk every 5 s: wait for the first, then read without -f
    for (let i = 0; i < 100; i++) {
      const s = (await api(`/v2/${endpointId}/status/${queued.id}`)).body as { status: string };
      if (s.status !== 'IN_QUEUE') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 300));
    const once = await runCli(['jobs', 'stream', endpointId, queued.id], env);
    expect({ code: once.code, stderr: once.stderr }).toEqual({ code: 0, stderr: '' });
    const first = once.stdout.trim().split('\n').filter(Boolean);
    expect(first.length).toBeLessThan(3); // it did not wait for the job to end
    const rest = await runCli(['jobs', 'stream', endpointId, queued.id, '-f'], env, 30_000);
    expect(rest.code).toBe(0);
    const lines = rest.stdout.trim().split('\n');
    // the chunks, then the final status line (and the job's output after it)
    const end = lines.findIndex((l) => / COMPLETED$/.test(l));
    expect(end).toBeGreaterThanOrEqual(0);
    // chunks are handed out once: the two reads together have all three, in order
    expect([...first, ...lines.slice(0, end)]).toEqual(['"x"', '"y"', '"z"']);
  }, 60_000);

  test("endpoints logs of a worker that is not the endpoint's exits 1 with the API's 404", async () => {
    const r = await runCli(['endpoints', 'logs', endpointId, 'no-such-worker'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/HTTP 404/);
  }, 30_000);

  test('run without --sync queues and answers the id; cancel cancels it', async () => {
    const r = await runCli(['jobs', 'run', endpointId, '--input', '{"sleep_ms":20000}', '--json'], env);
    expect(r.code).toBe(0);
    const job = JSON.parse(r.stdout) as { id: string; status: string };
    expect(job.id).toBeTruthy();
    const c = await runCli(['jobs', 'cancel', endpointId, job.id, '--json'], env);
    expect(c.code).toBe(0);
    expect(JSON.parse(c.stdout)).toMatchObject({ id: job.id, status: 'CANCELLED' });
    expect((await api(`/v2/${endpointId}/status/${job.id}`)).body?.status).toBe('CANCELLED');
  }, 60_000);

  test('jobs list: the history newest first, a status filter, --all over pages of --limit, a bad status exits 1 with the 400', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = ((await api(`/v2/${endpointId}/run`, { method: 'POST', json: { input: { sleep_ms: 20000 } } })).body as { id: string }).id;
      await api(`/v2/${endpointId}/cancel/${id}`, { method: 'POST' });
      ids.push(id);
      await new Promise((r) => setTimeout(r, 3)); // distinct createdAt: newest first is the reverse of this order
    }
    const page = await runCli(['jobs', 'list', endpointId, '--status', 'CANCELLED', '--limit', '2', '--json'], env);
    expect(page.code).toBe(0);
    const first = JSON.parse(page.stdout) as { jobs: { id: string; status: string }[]; nextCursor: string | null };
    expect(first.jobs.map((j) => j.id)).toEqual([ids[2], ids[1]]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const every = JSON.parse((await runCli(['jobs', 'list', endpointId, '--status', 'CANCELLED', '--limit', '1', '--all', '--json'], env)).stdout) as { id: string }[];
    expect(every.map((j) => j.id).slice(0, 3)).toEqual([...ids].reverse());
    const table = await runCli(['jobs', 'list', endpointId, '--status', 'CANCELLED', '--limit', '1'], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(ids[2]);
    expect(table.stdout).toContain('CANCELLED');
    expect(table.stderr).toMatch(/more: gpufleet jobs list .* --cursor \S+ --status CANCELLED/);
    const bad = await runCli(['jobs', 'list', endpointId, '--status', 'DONE'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/status/);
  }, 60_000);

  test('--input that is not JSON exits 2 before any request', async () => {
    const r = await runCli(['jobs', 'run', endpointId, '--input', '{not json', '--sync'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/valid JSON/);
  }, 30_000);
});
