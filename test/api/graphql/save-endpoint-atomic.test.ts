// GraphQL saveEndpoint with an inline template (`template: {imageName, …}` instead of a templateId)
// creates the template and the endpoint in one transaction. It used to take two: the template was
// committed first, and when the endpoint then failed a clean-up delete ran whose own error was
// swallowed, so a failure there left an orphan template, and readers saw the template in between.
// Each test records every transaction the store commits while the request runs (a listening server,
// a real client request), so "nothing was ever committed" is checked, not only "nothing is left".
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { StoreChange } from '../../../store/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { seedHosts } from '../../harness/fake-hosts.ts';
import { runpodctl, type Auth } from './gql-client.ts';

const SAVE = `mutation saveEndpoint($input: EndpointInput!) {
  saveEndpoint(input: $input) { id name templateId allowedCudaVersions template { id name imageName isServerless } }
}`;

let cp: TestControlPlane;
let auth: Auth;
let key: string;

beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [
    { id: 'cuda-old', gpus: 2, dataCenterId: 'US-TX-1', cudaVersion: '12.2' },
    { id: 'cuda-new', gpus: 2, dataCenterId: 'EU-RO-1', cudaVersion: '12.8' },
  ]);
  ({ key } = await cp.newAccount('read_write'));
  auth = { key };
});
afterAll(async () => cp?.close());

/**
 * Runs `fn` and returns every transaction the store committed meanwhile that touched a template or
 * an endpoint (each as its list of changes; the key's lastUsedAt is written on its own, not counted).
 */
async function commitsDuring(fn: () => Promise<unknown>): Promise<StoreChange[][]> {
  const commits: StoreChange[][] = [];
  const stop = cp.services.store.onCommit((changes) => {
    if (changes.some((c) => c.collection === 'templates' || c.collection === 'endpoints')) commits.push(changes);
  });
  try {
    await fn();
  } finally {
    stop();
  }
  return commits;
}

async function templateNames(): Promise<string[]> {
  const res = await cp.api('/v2/templates', { key });
  expect(res.status).toBe(200);
  return ((await res.json()) as { templates: { name: string }[] }).templates.map((t) => t.name);
}

const inline = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  template: { imageName: 'me/worker:1', containerDiskInGb: 10, env: [{ key: 'MODE', value: 'serverless' }] },
  gpuIds: 'AMPERE_16',
  workersMax: 2,
  ...extra,
});

describe('saveEndpoint with an inline template is one transaction', () => {
  test('success: the template and the endpoint are committed together, in one transaction', async () => {
    let reply: Awaited<ReturnType<typeof runpodctl>> | undefined;
    const commits = await commitsDuring(async () => {
      reply = await runpodctl(cp.url, auth, SAVE, { input: inline('together') });
    });
    expect(reply?.errors).toBeUndefined();
    const e = reply?.data.saveEndpoint;
    expect(e).toMatchObject({ name: 'together', template: { name: 'together__template', imageName: 'me/worker:1', isServerless: true } });
    expect(e.templateId).toBe(e.template.id);
    expect(commits).toHaveLength(1);
    expect(commits[0]).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ collection: 'templates', id: e.templateId, deleted: false }),
        expect.objectContaining({ collection: 'endpoints', id: e.id, deleted: false }),
      ]),
    );
  });

  test('the endpoint failing after its template was written (unknown network volume): nothing is ever committed, no template is left', async () => {
    let reply: Awaited<ReturnType<typeof runpodctl>> | undefined;
    const commits = await commitsDuring(async () => {
      reply = await runpodctl(cp.url, auth, SAVE, { input: inline('no-volume', { networkVolumeId: 'nv_missing' }) });
    });
    // the endpoint's own error comes back, not a clean-up error and not a masked one
    expect(reply?.errors?.[0]?.extensions).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: ['$.networkVolumeId: network volume nv_missing not found'],
    });
    expect(commits).toEqual([]);
    expect(await templateNames()).not.toContain('no-volume__template');
  });

  test('the endpoint failing its own rules (workersMin above workersMax): nothing is committed', async () => {
    let reply: Awaited<ReturnType<typeof runpodctl>> | undefined;
    const commits = await commitsDuring(async () => {
      reply = await runpodctl(cp.url, auth, SAVE, { input: inline('bad-bounds', { workersMin: 3, workersMax: 1 }) });
    });
    expect(reply?.errors?.[0]?.extensions?.code).toBeDefined();
    expect(commits).toEqual([]);
    expect(await templateNames()).not.toContain('bad-bounds__template');
  });

  test('a failure in the GraphQL input itself (hubReleaseId) is refused before anything is written', async () => {
    const commits = await commitsDuring(async () => {
      const r = await runpodctl(cp.url, auth, SAVE, { input: inline('hub', { hubReleaseId: 'rel_1' }) });
      expect(r.errors?.[0]?.extensions?.code).toBe('BAD_REQUEST');
    });
    expect(commits).toEqual([]);
    expect(await templateNames()).not.toContain('hub__template');
  });

  test('an invalid inline template is refused with the template schema error, and nothing is written', async () => {
    const commits = await commitsDuring(async () => {
      const r = await runpodctl(cp.url, auth, SAVE, { input: { ...inline('bad-image'), template: { imageName: 'Not An Image' } } });
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', errors: [expect.stringMatching(/^\$\.image: must be an image reference/)] });
    });
    expect(commits).toEqual([]);
  });
});

describe('minCudaVersion is decided in core against the fleet', () => {
  test('an endpoint keeps the CUDA versions of the hosts at or above the minimum', async () => {
    const r = await runpodctl(cp.url, auth, SAVE, { input: inline('cuda-min', { minCudaVersion: '12.4' }) });
    expect(r.errors).toBeUndefined();
    expect(r.data.saveEndpoint.allowedCudaVersions).toBe('12.8');
  });

  test('no host new enough: the minimum itself, which no host matches', async () => {
    const r = await runpodctl(cp.url, auth, SAVE, { input: inline('cuda-none', { minCudaVersion: '13.0' }) });
    expect(r.errors).toBeUndefined();
    expect(r.data.saveEndpoint.allowedCudaVersions).toBe('13.0');
  });

  test('a minimum that is not major.minor is refused at its GraphQL path, and nothing is written', async () => {
    const commits = await commitsDuring(async () => {
      const r = await runpodctl(cp.url, auth, SAVE, { input: inline('cuda-bad', { minCudaVersion: 'twelve' }) });
      expect(r.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_FAILED', errors: ['$.input.minCudaVersion: must look like 12.4'] });
    });
    expect(commits).toEqual([]);
  });
});
