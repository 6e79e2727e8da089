// GET /v2/serverless/{id}/metrics of a load-balancing endpoint (docs/serverless.md, "Metrics over
// time"): its queue is the gateway's requests in flight (and held for a worker), sampled while a slow
// request runs on an in-process worker; no jobs are counted.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startLocalLbWorld, type LocalLbWorld } from '../harness/lb-local.ts';
import { waitFor } from '../harness/wait-for.ts';

let world: LocalLbWorld;
beforeAll(async () => {
  world = await startLocalLbWorld({ workers: 1 });
  await waitFor('the worker in rotation', async () => {
    const list = (await (await world.cp.api(`/v2/serverless/${world.endpointId}/workers`, { key: world.key })).json()) as { workers: { status: string }[] };
    return list.workers.some((w) => w.status === 'IDLE');
  });
});
afterAll(async () => world?.close());

describe('a load balancer over time', () => {
  test('a request in flight is the queue\'s inProgress at the sample; the worker counts as running', async () => {
    const slow = fetch(`${world.cp.url}/v2/${world.endpointId}/slow?ms=1500`, { headers: { authorization: `Bearer ${world.key}` } });
    await waitFor('in flight', async () => world.cp.services.workers.requests.depth(world.endpointId).inProgress === 1);
    await world.cp.services.endpointHistory.sample();
    const m = (await (await world.cp.api(`/v2/serverless/${world.endpointId}/metrics?step=10s&from=${Math.floor(Date.now() / 1000) - 60}`, { key: world.key })).json()) as {
      buckets: { queue: { inQueue: number; inProgress: number } | null; workers: { running: number } | null; jobs: { completed: number } }[];
    };
    const last = m.buckets.at(-1)!;
    expect(last.queue).toMatchObject({ inQueue: 0, inProgress: 1 });
    expect(last.workers!.running).toBe(1);
    expect(m.buckets.reduce((n, b) => n + b.jobs.completed, 0)).toBe(0);
    expect((await slow).status).toBe(200);
  });
});
