// Spec part 9: the OpenAPI document marks persistent pod mounts deprecated in favor of network mounts,
// wherever a pod or template body or view carries one; network mounts are not deprecated, and a
// deprecated field is still accepted.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';

let cp: TestControlPlane;
beforeAll(async () => {
  cp = await startTestControlPlane();
  await seedHosts(cp.services.store, [{ gpus: 8 }]);
});
afterAll(async () => cp?.close());

type Schema = { deprecated?: boolean; properties?: Record<string, Schema>; items?: Schema };
type Operation = {
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
};

function mountsOf(s: Schema | undefined): Schema | undefined {
  return s?.properties?.mounts ?? s?.properties?.pods?.items?.properties?.mounts;
}

test('/v2/openapi.json: mounts.persistent is deprecated in every pod and template body and pod view; mounts.network is not', async () => {
  const res = await cp.api('/v2/openapi.json', { key: null });
  expect(res.status).toBe(200);
  const doc = (await res.json()) as { paths: Record<string, Record<string, Operation>> };
  const op = (p: string, m: string) => {
    const o = doc.paths[p]?.[m];
    if (!o) throw new Error(`no ${m} ${p} in the document`);
    return o;
  };
  const bodies: [string, Schema | undefined][] = [
    ['POST /v2/pods body', op('/v2/pods', 'post').requestBody?.content['application/json']?.schema],
    ['PATCH /v2/pods/{id} body', op('/v2/pods/{id}', 'patch').requestBody?.content['application/json']?.schema],
    ['POST /v2/pods 201', op('/v2/pods', 'post').responses['201']?.content?.['application/json']?.schema],
    ['GET /v2/pods 200', op('/v2/pods', 'get').responses['200']?.content?.['application/json']?.schema],
    ['GET /v2/pods/{id} 200', op('/v2/pods/{id}', 'get').responses['200']?.content?.['application/json']?.schema],
    ['POST /v2/templates body', op('/v2/templates', 'post').requestBody?.content['application/json']?.schema],
    ['PATCH /v2/templates/{id} body', op('/v2/templates/{id}', 'patch').requestBody?.content['application/json']?.schema],
  ];
  for (const [where, schema] of bodies) {
    const mounts = mountsOf(schema);
    expect(mounts?.properties?.persistent?.deprecated, where).toBe(true);
    // the mounts object itself and its network mounts are not deprecated
    expect(mounts?.deprecated, where).toBeUndefined();
    if (mounts?.properties?.network) expect(mounts.properties.network.deprecated, where).toBeUndefined();
  }
  expect(mountsOf(bodies[0]![1])?.properties?.network?.items?.deprecated).toBeUndefined();
});

test('a deprecated persistent mount is still accepted', async () => {
  const res = await cp.api('/v2/pods', {
    method: 'POST',
    json: { name: 'legacy-mount', image: 'busybox', gpu: { id: 'NVIDIA H100 80GB HBM3' }, mounts: { persistent: { size: 20, path: '/workspace' } } },
  });
  expect(res.status).toBe(201);
  expect(((await res.json()) as { mounts: unknown }).mounts).toEqual({ persistent: { size: 20, path: '/workspace' } });
});
