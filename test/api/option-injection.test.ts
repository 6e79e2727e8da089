// Issue 8 items 2 and 3 through a listening server: values that would be read as `docker run`
// options (a leading dash in the image), NUL and other control characters are refused with 422 and
// a JSONPath error by every way in (REST POST/PATCH pods, REST templates, GraphQL
// podFindAndDeployOnDemand and saveTemplate), and nothing is stored. Env values are not text a
// host interprets: they are kept byte for byte (newlines included), only NUL is refused.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestControlPlane } from '../harness/control-plane.ts';
import { runpodctl, type Auth } from './graphql/gql-client.ts';
import { call, gpuBody, H100, snapshotPods, startPodsControlPlane } from './pods-helpers.ts';

let cp: TestControlPlane;
let user: { accountId: string; key: string };
let auth: Auth;

beforeAll(async () => {
  // the local registry forms of the grammar (localhost, a single label with a port) pass where the operator allows them (docs/security.md)
  cp = await startPodsControlPlane({ config: { allowedRegistries: ['localhost:5000', 'my-registry:5000'] } });
  user = await cp.newAccount('read_write');
  auth = { key: user.key };
});
afterAll(async () => cp?.close());

const IMAGE_ERROR = /^\$\.image: must be an image reference/;
const CONTROL_ERROR = 'must not contain control characters (tab aside)';

/** images that must never reach docker: options, control characters, not the reference grammar */
const BAD_IMAGES = ['--volume=/:/host', '--privileged', '-v', '--network=host', 'busybox\0', 'busybox\n--privileged', 'busybox:1.36\r', 'bu sybox', 'Busybox', 'busybox:-1'];

async function snapshotTemplates(): Promise<string> {
  const r = await call(cp, '/v2/templates', { key: user.key });
  expect(r.status).toBe(200);
  return JSON.stringify(r.body);
}

async function expect422(path: string, method: string, json: unknown, error: RegExp | string): Promise<void> {
  const r = await call(cp, path, { method, key: user.key, json });
  expect(r.status, `${method} ${path} ${JSON.stringify(json)} → ${r.text}`).toBe(422);
  expect(r.res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body.code).toBe('VALIDATION_FAILED');
  expect(r.body.errors.some((e: string) => (typeof error === 'string' ? e === error : error.test(e))), JSON.stringify(r.body.errors)).toBe(true);
}

describe('an image that is not a registry reference is refused with 422 and nothing stored', () => {
  test('POST /v2/pods: "--volume=/:/host" with args naming a real image, --privileged, NUL, newline', async () => {
    const before = await snapshotPods(cp, user.key);
    for (const image of BAD_IMAGES) await expect422('/v2/pods', 'POST', gpuBody({ image, args: 'busybox:1.36 sleep 1' }), IMAGE_ERROR);
    expect(await snapshotPods(cp, user.key)).toBe(before);
  });

  test('PATCH /v2/pods/{id}: the same images leave the pod as it was', async () => {
    const made = await call(cp, '/v2/pods', { method: 'POST', key: user.key, json: gpuBody() });
    expect(made.status, made.text).toBe(201);
    const before = await snapshotPods(cp, user.key);
    for (const image of BAD_IMAGES) await expect422(`/v2/pods/${made.body.id}`, 'PATCH', { image }, IMAGE_ERROR);
    expect(await snapshotPods(cp, user.key)).toBe(before);
  });

  test('POST and PATCH /v2/templates', async () => {
    const made = await call(cp, '/v2/templates', { method: 'POST', key: user.key, json: { name: 'inj-base', image: 'busybox' } });
    expect(made.status, made.text).toBe(201);
    const before = await snapshotTemplates();
    for (const [i, image] of BAD_IMAGES.entries()) {
      await expect422('/v2/templates', 'POST', { name: `inj-${i}`, image }, IMAGE_ERROR);
      await expect422(`/v2/templates/${made.body.id}`, 'PATCH', { image }, IMAGE_ERROR);
    }
    expect(await snapshotTemplates()).toBe(before);
  });

  test('GraphQL podFindAndDeployOnDemand imageName and saveTemplate imageName', async () => {
    const podsBefore = await snapshotPods(cp, user.key);
    const templatesBefore = await snapshotTemplates();
    const deploy = `mutation Deploy($input: PodFindAndDeployOnDemandInput) { podFindAndDeployOnDemand(input: $input) { id } }`;
    const save = `mutation Save($input: SaveTemplateInput) { saveTemplate(input: $input) { id } }`;
    for (const [i, imageName] of BAD_IMAGES.entries()) {
      const d = await runpodctl(cp.url, auth, deploy, { input: { name: `gql-inj-${i}`, imageName, dockerArgs: 'busybox:1.36 sleep 1', gpuTypeId: H100, cloudType: 'SECURE' } });
      expect(d.data?.podFindAndDeployOnDemand ?? null).toBeNull();
      expect(d.errors?.[0]?.extensions?.code, JSON.stringify(d.errors)).toBe('VALIDATION_FAILED');
      expect(d.errors?.[0]?.extensions?.errors?.some((e) => IMAGE_ERROR.test(e))).toBe(true);
      const s = await runpodctl(cp.url, auth, save, { input: { name: `gql-tpl-inj-${i}`, imageName } });
      expect(s.data?.saveTemplate ?? null).toBeNull();
      expect(s.errors?.[0]?.extensions?.code, JSON.stringify(s.errors)).toBe('VALIDATION_FAILED');
      expect(s.errors?.[0]?.extensions?.errors?.some((e) => IMAGE_ERROR.test(e))).toBe(true);
    }
    expect(await snapshotPods(cp, user.key)).toBe(podsBefore);
    expect(await snapshotTemplates()).toBe(templatesBefore);
  });

  test('references docker accepts still pass: registry with port, nested path, tag, digest', async () => {
    const images = ['busybox', 'ghcr.io/org/app:v1.2_3', 'localhost:5000/team/app', 'my-registry:5000/a/b:c', `app@sha256:${'a'.repeat(64)}`, 'runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04'];
    for (const image of images) {
      const r = await call(cp, '/v2/templates', { method: 'POST', key: user.key, json: { name: `ok-${images.indexOf(image)}`, image } });
      expect(r.status, `${image}: ${r.text}`).toBe(201);
    }
  });
});

describe('control characters in text a host reads are refused with 422', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['NUL in args', { args: 'sleep\u00001' }, `$.args: ${CONTROL_ERROR}`],
    ['newline in args', { args: 'sleep 1\n--privileged' }, `$.args: ${CONTROL_ERROR}`],
    ['escape in args', { args: 'echo \u001b[2J' }, `$.args: ${CONTROL_ERROR}`],
    ['NUL in name', { name: 'a\u0000b' }, `$.name: ${CONTROL_ERROR}`],
    ['newline in name', { name: 'a\nb' }, `$.name: ${CONTROL_ERROR}`],
    ['C1 control in name', { name: 'a\u0085b' }, `$.name: ${CONTROL_ERROR}`],
    ['colon in a mount path', { mounts: { persistent: { size: 20, path: '/w:/etc' } } }, '$.mounts.persistent.path: must be an absolute path without whitespace, control characters or ":"'],
    ['newline in a mount path', { mounts: { persistent: { size: 20, path: '/w\n' } } }, '$.mounts.persistent.path: must be an absolute path without whitespace, control characters or ":"'],
    ['NUL in an env value', { env: { A: 'x\u0000y' } }, '$.env.A: must not contain a NUL character or an unpaired surrogate'],
    ['an unpaired surrogate in an env value', { env: { A: 'x\ud800' } }, '$.env.A: must not contain a NUL character or an unpaired surrogate'],
  ];
  test.each(cases)('POST /v2/pods: %s', async (_what, extra, error) => {
    const before = await snapshotPods(cp, user.key);
    await expect422('/v2/pods', 'POST', gpuBody(extra), error);
    expect(await snapshotPods(cp, user.key)).toBe(before);
  });

  test('a tab is text, not a control character', async () => {
    const r = await call(cp, '/v2/pods', { method: 'POST', key: user.key, json: gpuBody({ args: "sh -c 'printf \"a\tb\"'" }) });
    expect(r.status, r.text).toBe(201);
    expect(r.body.args).toBe("sh -c 'printf \"a\tb\"'");
  });
});

test('env values are kept exactly as sent: newlines, quotes, $(...) and backslashes', async () => {
  const value = `line1\nsaid "hi" $(id) \`id\` \\n \\ 'q'\r\n\n`;
  const r = await call(cp, '/v2/pods', { method: 'POST', key: user.key, json: gpuBody({ env: { MULTI: value, TAB: 'a\tb' } }) });
  expect(r.status, r.text).toBe(201);
  const stored = await cp.services.store.get('pods', r.body.id);
  expect(stored?.env).toEqual({ MULTI: value, TAB: 'a\tb' });
  expect(r.body.env).toEqual({ MULTI: value, TAB: 'a\tb' });
});
