// The public v2 serverless routes over the same endpoint records as v1: create (201, v2 shape), get,
// list (wrapped), patch (only what is sent), delete (204); v2 failures name v2 paths; another
// account's endpoint is 404. Deleting an endpoint (v2 or v1) cancels its queued and running jobs,
// tells the worker to stop, then removes their history.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, startJobWorld, type JobWorld } from '../jobs/in-process-workers.ts';

let world: JobWorld;
const api = (path: string, init: Parameters<JobWorld['cp']['api']>[1] = {}) => world.cp.api(path, { key: world.user.key, ...init });

beforeAll(async () => {
  world = await startJobWorld();
});
afterAll(async () => world?.close());

function v2Body(extra: Record<string, unknown> = {}) {
  return {
    name: 'v2-ep',
    type: 'QUEUE',
    templateId: world.templateId,
    scaling: { type: 'REQUEST_COUNT', requestCount: 3 },
    gpu: { pools: ['ADA_24'], count: 1 },
    workers: { min: 0, max: 2, idleTimeout: 7 },
    timeout: 120000,
    flashboot: 'FLASHBOOT',
    ...extra,
  };
}

describe('/v2/serverless', () => {
  test('create answers 201 with the v2 shape; v1 shows the same record', async () => {
    const res = await api('/v2/serverless', { method: 'POST', json: v2Body() });
    expect(res.status).toBe(201);
    const e = (await res.json()) as Record<string, any>;
    expect(e).toMatchObject({
      name: 'v2-ep',
      type: 'QUEUE',
      templateId: world.templateId,
      gpu: { pools: ['ADA_24'], count: 1, excludedTypes: [] },
      cpu: [],
      workers: { min: 0, max: 2, idleTimeout: 7 },
      scaling: { type: 'REQUEST_COUNT', requestCount: 3 },
      timeout: 120000,
      flashboot: 'FLASHBOOT',
      networkVolumes: [],
      dataCenterIds: [],
    });
    expect(e.id).toMatch(/^[a-z0-9]{14}$/);
    expect(e.requestUrls.run).toBe(`${world.cp.url}/v2/${e.id}/run`);
    expect(e.requestUrls.health).toBe(`${world.cp.url}/v2/${e.id}/health`);
    const v1 = (await (await api(`/v1/endpoints/${e.id}`)).json()) as Record<string, unknown>;
    expect(v1).toMatchObject({ id: e.id, workersMax: 2, idleTimeout: 7, scalerType: 'REQUEST_COUNT', scalerValue: 3, executionTimeoutMs: 120000, flashboot: true, gpuTypeIds: ['ADA_24'] });
    // the v2 get and list show it; v1-created endpoints appear too
    expect(await (await api(`/v2/serverless/${e.id}`)).json()).toEqual(e);
    const v1Made = await world.newEndpoint();
    const list = (await (await api('/v2/serverless')).json()) as { endpoints: { id: string }[] };
    expect(list.endpoints.map((x) => x.id)).toEqual(expect.arrayContaining([e.id, v1Made]));
  });

  test('defaults: a v2 create without timeout gets 300000 ms; scaling QUEUE_DELAY reads back', async () => {
    const e = (await (await api('/v2/serverless', { method: 'POST', json: v2Body({ timeout: undefined, scaling: { type: 'QUEUE_DELAY', queueDelay: 9 } }) })).json()) as Record<string, any>;
    expect(e.timeout).toBe(300000);
    expect(e.scaling).toEqual({ type: 'QUEUE_DELAY', queueDelay: 9 });
  });

  test('patch changes only the fields sent', async () => {
    const e = (await (await api('/v2/serverless', { method: 'POST', json: v2Body() })).json()) as Record<string, any>;
    const res = await api(`/v2/serverless/${e.id}`, { method: 'PATCH', json: { workers: { max: 5 }, name: 'renamed' } });
    expect(res.status).toBe(200);
    const p = (await res.json()) as Record<string, any>;
    expect(p).toMatchObject({ name: 'renamed', workers: { min: 0, max: 5, idleTimeout: 7 }, scaling: e.scaling, timeout: 120000 });
  });

  test('refused with v2 paths and nothing made: missing fields, CPU, workers.min > workers.max, unknown template, unknown field', async () => {
    const before = ((await (await api('/v2/serverless')).json()) as { endpoints: unknown[] }).endpoints.length;
    const templatesBefore = ((await (await api('/v2/templates')).json()) as { templates: unknown[] }).templates.length;
    const cases: [Record<string, unknown>, number, string][] = [
      [{ name: 'x' }, 422, '$.type: is required'],
      [v2Body({ gpu: undefined }), 422, '$.gpu.pools: is required'],
      [v2Body({ cpu: [{ id: 'cpu3c', vcpuCount: 2 }] }), 422, '$.cpu: CPU endpoints are not offered yet'],
      [v2Body({ templateId: 'tpl_nope' }), 422, '$.templateId'],
      [v2Body({ image: 'busybox' }), 400, '$.templateId: give templateId or the container fields'],
      [v2Body({ templateId: undefined }), 422, '$.image: is required when templateId is not given'],
      [v2Body({ templateId: undefined, args: 'sleep 1' }), 422, '$.image: is required when templateId is not given'],
      [v2Body({ templateId: undefined, image: 'busybox', workers: { min: 3, max: 1 } }), 400, ''],
      [v2Body({ templateId: undefined, image: 'busybox', disk: 0 }), 422, '$.disk'],
      [v2Body({ templateId: undefined, image: 'busybox', gpu: { pools: ['NOPE_POOL'] } }), 422, '$.gpu.pools[0]'],
      [v2Body({ mounts: {} }), 422, '$.mounts: unknown property'],
      [v2Body({ scaling: { type: 'QUEUE_DELAY', requestCount: 3 } }), 422, '$.scaling'],
      [v2Body({ gpu: { pools: ['NOPE_POOL'] } }), 422, '$.gpu.pools[0]'],
      [v2Body({ workers: { min: 3, max: 1 } }), 400, ''],
    ];
    for (const [body, status, path] of cases) {
      const res = await api('/v2/serverless', { method: 'POST', json: body });
      const text = await res.text();
      expect(res.status, text).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      if (path) expect(text, JSON.stringify(body)).toContain(path);
    }
    expect(((await (await api('/v2/serverless')).json()) as { endpoints: unknown[] }).endpoints.length).toBe(before);
    // a refused create with container fields left no template behind
    expect(((await (await api('/v2/templates')).json()) as { templates: unknown[] }).templates.length).toBe(templatesBefore);
  });

  test('create with the container fields instead of a templateId: the endpoint gets a serverless template made from them, shown in its v2 shape', async () => {
    const res = await api('/v2/serverless', {
      method: 'POST',
      json: v2Body({ templateId: undefined, name: 'inline', image: 'busybox:1.36', args: 'sleep 5', disk: 3, ports: ['8080/http'], env: { MODE: 'fast' } }),
    });
    const e = (await res.json()) as Record<string, any>;
    expect(res.status, JSON.stringify(e)).toBe(201);
    expect(e).toMatchObject({ name: 'inline', image: 'busybox:1.36', args: 'sleep 5', disk: 3, ports: ['8080/http'], registry: null, env: { MODE: 'fast' } });
    const t = (await (await api(`/v2/templates/${e.templateId}`)).json()) as Record<string, any>;
    expect(t).toMatchObject({ id: e.templateId, name: 'inline__template', image: 'busybox:1.36', args: 'sleep 5', disk: 3, serverless: true });
    expect(await (await api(`/v2/serverless/${e.id}`)).json()).toEqual(e);
    // a templateId endpoint shows its template's container fields too
    const byId = (await (await api('/v2/serverless', { method: 'POST', json: v2Body() })).json()) as Record<string, any>;
    expect(byId).toMatchObject({ templateId: world.templateId, image: 'busybox' });
  });

  test('patch with container fields changes the endpoint\'s own template (workers roll); a shared template, or both templateId and container fields, is 400 and nothing changes', async () => {
    const e = (await (await api('/v2/serverless', { method: 'POST', json: v2Body({ templateId: undefined, name: 'inline-patch', image: 'busybox:1.36' }) })).json()) as Record<string, any>;
    const res = await api(`/v2/serverless/${e.id}`, { method: 'PATCH', json: { image: 'busybox:1.37', workers: { max: 3 } } });
    const p = (await res.json()) as Record<string, any>;
    expect(res.status, JSON.stringify(p)).toBe(200);
    expect(p).toMatchObject({ image: 'busybox:1.37', templateId: e.templateId, workers: { max: 3 } });
    expect(p.version).toBeGreaterThan(e.version);

    const shared = (await (await api('/v2/serverless', { method: 'POST', json: v2Body() })).json()) as Record<string, any>;
    const refused = await api(`/v2/serverless/${shared.id}`, { method: 'PATCH', json: { image: 'alpine:3' } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/also runs endpoint/);
    const both = await api(`/v2/serverless/${e.id}`, { method: 'PATCH', json: { image: 'alpine:3', templateId: world.templateId } });
    expect(both.status).toBe(400);
    expect(((await (await api(`/v2/templates/${world.templateId}`)).json()) as { image: string }).image).toBe('busybox');
    expect(((await (await api(`/v2/serverless/${e.id}`)).json()) as { image: string; templateId: string })).toMatchObject({ image: 'busybox:1.37', templateId: e.templateId });
  });

  test("another account's endpoint is 404 on get, patch and delete, and stays as it was", async () => {
    const e = (await (await api('/v2/serverless', { method: 'POST', json: v2Body() })).json()) as { id: string };
    const other = await world.cp.newAccount('read_write');
    for (const [method, json] of [['GET', undefined], ['PATCH', { name: 'stolen' }], ['DELETE', undefined]] as const) {
      const res = await world.cp.api(`/v2/serverless/${e.id}`, { method, key: other.key, ...(json ? { json } : {}) });
      expect(res.status, method).toBe(404);
    }
    expect(((await (await api(`/v2/serverless/${e.id}`)).json()) as { name: string }).name).toBe('v2-ep');
  });
});

describe('deleting an endpoint', () => {
  test('v2 delete cancels its queued and running jobs (the worker is told to stop), then their history is gone', async () => {
    const e = (await (await api('/v2/serverless', { method: 'POST', json: v2Body() })).json()) as { id: string };
    const w = await world.directory.issue(e.id);
    const run = async (input: unknown) => ((await (await api(`/v2/${e.id}/run`, { method: 'POST', json: { input } })).json()) as { id: string }).id;
    const running = await run({ a: 1 });
    const took = await fetch(`${world.cp.url}/v2/${e.id}/job-take/${w.workerId}?job_in_progress=0`, { headers: { authorization: w.token } });
    expect(((await took.json()) as { id: string }).id).toBe(running);
    const queued = await run({ b: 2 });
    const stop = fetch(`${world.cp.url}/v2/${e.id}/job-stop/${w.workerId}`, { headers: { authorization: w.token } });
    await new Promise((r) => setTimeout(r, 100));

    // watch the running job reach CANCELLED: a final-status wait resolves with it before the history goes
    const sawFinal = world.cp.services.jobQueue.waitForFinal(running, { waitMs: 10_000 });
    expect((await api(`/v2/serverless/${e.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await sawFinal)?.status).toBe('CANCELLED');
    const stopped = await stop;
    expect(stopped.status).toBe(200);
    expect(await stopped.json()).toEqual({ jobsToStop: [running] });
    for (const id of [running, queued]) expect(await world.cp.services.jobQueue.get(id)).toBeUndefined();
    expect((await api(`/v2/${e.id}/status/${queued}`)).status).toBe(404);
    expect((await api(`/v2/serverless/${e.id}`)).status).toBe(404);
  });

  test('v1 delete does the same', async () => {
    const id = await world.newEndpoint();
    const job = ((await (await api(`/v2/${id}/run`, { method: 'POST', json: { input: {} } })).json()) as { id: string }).id;
    const sawFinal = world.cp.services.jobQueue.waitForFinal(job, { waitMs: 10_000 });
    expect((await api(`/v1/endpoints/${id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await sawFinal)?.status).toBe('CANCELLED');
    await eventually(async () => (await world.cp.services.jobQueue.get(job)) === undefined, 2000, 'the history to go');
  });
});
