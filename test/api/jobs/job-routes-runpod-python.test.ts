// Every job route runpod-python's `runpod.Endpoint` client wraps, driven by the unmodified client from
// ../shared/peers/ against the real routes and in-process SDK workers: run, status, output, run_sync,
// stream (its loop ends only when a final status comes with an empty stream), cancel and
// purge_queue (both sent as a JSON content type with an empty body), health, and a wrong key.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually, handlerLog, startJobWorld, type JobWorld } from './in-process-workers.ts';
import { RunpodPythonEndpoint } from './runpod-python-endpoint.ts';

let world: JobWorld;
let endpointId: string;
let py: RunpodPythonEndpoint;
const op = (o: Parameters<RunpodPythonEndpoint['call']>[0]) => py.call({ endpoint: endpointId, apiKey: world.user.key, ...o });

beforeAll(async () => {
  world = await startJobWorld();
  endpointId = await world.newEndpoint();
  await world.startWorker(endpointId, { concurrency: 2 });
  py = await RunpodPythonEndpoint.start(`${world.cp.url}/v2`);
}, 600_000);
afterAll(async () => {
  await py?.close();
  await world?.close();
});

describe('runpod.Endpoint drives the job interface', () => {
  test('run, status and output(timeout): the handler output comes back', async () => {
    const id = await op({ op: 'run', request: { input: { output: { text: 'hi' } } } });
    expect(typeof id).toBe('string');
    expect(await op({ op: 'output', job: id, timeout: 20 })).toEqual({ text: 'hi' });
    expect(await op({ op: 'status', job: id })).toBe('COMPLETED');
  });

  test('run wraps a bare input (no "input" key) as {"input": …}', async () => {
    const id = await op({ op: 'run', request: { prompt: 'bare' } });
    expect(await op({ op: 'output', job: id, timeout: 20 })).toEqual({ echo: { prompt: 'bare' } });
  });

  test('run_sync: runsync without ?wait (the 90 s default) answers the output', async () => {
    expect(await op({ op: 'run_sync', request: { input: { sleep_ms: 200, output: [1, 2, 3] } }, timeout: 60 })).toEqual([1, 2, 3]);
  });

  test('stream: the client yields every chunk once and its loop ends', async () => {
    const id = await op({ op: 'run', request: { input: { stream: ['a', 'b', 'c', 'd'], stream_delay_ms: 300 } } });
    expect(await op({ op: 'stream', job: id })).toEqual(['a', 'b', 'c', 'd']);
  });

  test('cancel, sent with a JSON content type and no body, cancels a running job and stops its handler', async () => {
    const id = await op({ op: 'run', request: { input: { sleep_ms: 30_000 } } });
    await eventually(async () => (await op({ op: 'status', job: id })) === 'IN_PROGRESS', 10_000, 'the job to start');
    expect(await op({ op: 'cancel', job: id })).toMatchObject({ id, status: 'CANCELLED' });
    await eventually(async () => handlerLog.stopped.includes(id), 10_000, 'the handler to be stopped');
  });

  test('health and purge_queue (an empty JSON body) on an endpoint with queued jobs and no worker', async () => {
    const idle = await world.newEndpoint();
    for (let i = 0; i < 2; i++) await py.call({ op: 'run', endpoint: idle, apiKey: world.user.key, request: { input: { i } } });
    const h = await py.call({ op: 'health', endpoint: idle, apiKey: world.user.key });
    expect(h.jobs).toEqual({ completed: 0, failed: 0, inProgress: 0, inQueue: 2, retried: 0 });
    expect(await py.call({ op: 'purge_queue', endpoint: idle, apiKey: world.user.key })).toEqual({ removed: 2, status: 'completed' });
  });

  test('a wrong key: the client raises its 401 error', async () => {
    const a = await py.send({ op: 'health', endpoint: endpointId, apiKey: 'gf_not_a_key_0123456789abcdef' });
    expect(a).toMatchObject({ error: { type: 'RuntimeError', message: expect.stringContaining('401') } });
  });
});
