// A tenant's image may name only registries on public addresses (issue 18, item 1; docs/security.md,
// "Registries a tenant may name"): a registry on the host's loopback, a private or link-local address
// (the cloud's metadata service) or with a local name is refused with 422 naming `$.image`, wherever
// an image is accepted (REST v2 pods, templates and serverless endpoints, GraphQL), and nothing is
// stored; the operator allows exact registries with GPUFLEET_ALLOWED_REGISTRIES. At start the
// control plane logs the registries that records stored before the rule name and it now refuses.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { configFromEnv, configWarnings } from '../../core/index.ts';
import { imageRegistryRefusal } from '../../model/index.ts';
import { startTestControlPlane, type TestControlPlane } from '../harness/control-plane.ts';
import { seedHosts } from '../harness/fake-hosts.ts';
import { startLoopbackSecretService, type LoopbackSecretService } from '../harness/redirecting-registry.ts';
import { waitFor } from '../harness/wait-for.ts';

type J = any;
const H100 = 'NVIDIA H100 80GB HBM3';
const ALLOWED = ['127.0.0.1:5999', 'mirror.local:5000'];

let cp: TestControlPlane;
let secret: LoopbackSecretService;
let user: { accountId: string; key: string };
let dataDir: string;

beforeAll(async () => {
  secret = await startLoopbackSecretService(`HOST-LOCAL-SECRET-${process.pid}`);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-img-reg-'));
  cp = await startTestControlPlane({ dataDir, config: { allowedRegistries: ALLOWED } });
  await seedHosts(cp.services.store, [{ gpus: 8 }, { gpus: 8 }, { gpus: 8 }]);
  user = await cp.newAccount();
});
afterAll(async () => {
  await cp?.close();
  await secret?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** every form of "this host" and "the network behind it" a tenant might try */
function refusedImages(): string[] {
  const port = secret.address.split(':')[1]!;
  return [
    `${secret.address}/secret/x:1`,
    `localhost:${port}/secret/x:1`,
    `LocalHost:${port}/secret/x:1`,
    `api.localhost:${port}/secret/x:1`,
    `[::1]:${port}/secret/x:1`,
    `[::ffff:7f00:1]:${port}/secret/x:1`, // IPv4-mapped 127.0.0.1
    `[::ffff:0:7f00:1]:${port}/secret/x:1`, // IPv4-translated 127.0.0.1
    `[64:ff9b:1::a9fe:a9fe]/latest/x:1`, // local-use NAT64 of 169.254.169.254
    `[2002:7f00:1::1]:${port}/secret/x:1`, // 6to4 of 127.0.0.1
    `[fe80::1]:${port}/secret/x:1`,
    `169.254.169.254/latest/meta-data:1`,
    `169.254.169.254:80/latest/meta-data:1`,
    `10.0.0.5:5000/team/app:1`,
    `192.168.1.10/team/app`,
    `0.0.0.0:${port}/secret/x:1`,
    `127.1:${port}/secret/x:1`, // getaddrinfo reads these as 127.0.0.1
    `2130706433:${port}/secret/x:1`,
    `0x7f.0.0.1:${port}/secret/x:1`,
    `metadata.google.internal/computemetadata/v1:1`,
    `printer.local:631/x`,
    `127.0.0.1:5998/x:1`, // the allowed registry's host on another port
    `mirror.local/x:1`, // the allowed name without its port
  ];
}

const post = (p: string, json: unknown) => cp.api(p, { method: 'POST', key: user.key, json });
const gql = async (query: string, variables: Record<string, unknown>): Promise<J> =>
  (await cp.api('/graphql', { method: 'POST', key: user.key, json: { query, variables } })).json();

async function expect422(res: Response, image: string): Promise<void> {
  const body = (await res.json()) as J;
  expect(res.status, `${image}: ${JSON.stringify(body)}`).toBe(422);
  expect(body.errors, image).toHaveLength(1);
  expect(body.errors[0], image).toMatch(/^\$\.image: names the registry \S+, .*GPUFLEET_ALLOWED_REGISTRIES/);
}

describe('registries a tenant may name', () => {
  test('loopback, private, link-local, reserved and local registries are 422 naming $.image for pods, templates and endpoints; nothing is stored and nothing is fetched', async () => {
    for (const image of refusedImages()) {
      await expect422(await post('/v2/pods', { name: 'p', image, gpu: { id: H100 } }), image);
      await expect422(await post('/v2/templates', { name: 't', image }), image);
      await expect422(
        await post('/v2/serverless', { name: 'e', type: 'QUEUE', image, scaling: { type: 'REQUEST_COUNT', requestCount: 1 }, gpu: { pools: ['ADA_24'], count: 1 }, workers: { min: 0, max: 1 } }),
        image,
      );
    }
    expect(await cp.services.store.list('pods')).toEqual([]);
    expect(await cp.services.store.list('templates')).toEqual([]);
    expect(await cp.services.store.list('endpoints')).toEqual([]);
    expect(secret.hits).toEqual([]);
  });

  test('GraphQL: podFindAndDeployOnDemand, saveTemplate and saveEndpoint refuse them alike', async () => {
    for (const image of [`${secret.address}/secret/x:1`, '169.254.169.254/latest/x:1', '[::ffff:0:7f00:1]:80/x']) {
      const pod = await gql('mutation($i: PodFindAndDeployOnDemandInput) { podFindAndDeployOnDemand(input: $i) { id } }', {
        i: { name: 'g', imageName: image, gpuTypeId: H100, cloudType: 'SECURE', containerDiskInGb: 5 },
      });
      const tpl = await gql('mutation($i: SaveTemplateInput) { saveTemplate(input: $i) { id } }', {
        i: { name: 'gt', imageName: image, containerDiskInGb: 5, volumeInGb: 0, dockerArgs: '' },
      });
      const ep = await gql('mutation($i: EndpointInput!) { saveEndpoint(input: $i) { id } }', {
        i: { name: 'ge', gpuIds: 'AMPERE_80', workersMin: 0, workersMax: 1, template: { name: 'ge-t', imageName: image, containerDiskInGb: 5 } },
      });
      for (const [what, r] of [['pod', pod], ['template', tpl], ['endpoint', ep]] as const) {
        expect(r.errors?.[0]?.extensions?.code, `${what} ${image}: ${JSON.stringify(r)}`).toBe('VALIDATION_FAILED');
        expect(JSON.stringify(r.errors[0]), what).toContain('$.image: names the registry');
      }
    }
    expect(await cp.services.store.list('pods')).toEqual([]);
    expect(await cp.services.store.list('templates')).toEqual([]);
  });

  test('an update cannot move a pod, a template or an endpoint to such a registry', async () => {
    const pod = (await (await post('/v2/pods', { name: 'upd', image: 'ghcr.io/team/app:1', gpu: { id: H100 } })).json()) as J;
    const tpl = (await (await post('/v2/templates', { name: 'upd-t', image: 'ghcr.io/team/app:1' })).json()) as J;
    const ep = (await (
      await post('/v2/serverless', { name: 'upd-e', type: 'QUEUE', image: 'ghcr.io/team/app:1', scaling: { type: 'REQUEST_COUNT', requestCount: 1 }, gpu: { pools: ['ADA_24'], count: 1 }, workers: { min: 0, max: 1 } })
    ).json()) as J;
    const image = `${secret.address}/secret/x:1`;
    await expect422(await cp.api(`/v2/pods/${pod.id}`, { method: 'PATCH', key: user.key, json: { image } }), image);
    await expect422(await cp.api(`/v2/templates/${tpl.id}`, { method: 'PATCH', key: user.key, json: { image } }), image);
    await expect422(await cp.api(`/v2/serverless/${ep.id}`, { method: 'PATCH', key: user.key, json: { image } }), image);
    expect((await cp.services.store.get('pods', pod.id))!.image).toBe('ghcr.io/team/app:1');
    expect((await cp.services.store.get('templates', tpl.id))!.image).toBe('ghcr.io/team/app:1');
    for (const t of await cp.services.store.list('templates')) expect(t.image).toBe('ghcr.io/team/app:1');
  });

  test('public registries, Docker Hub and the registries GPUFLEET_ALLOWED_REGISTRIES names (exact host and port) are accepted', async () => {
    for (const image of ['busybox:1.36', 'library/busybox', 'ghcr.io/org/app:v1', '93.184.216.34:5000/a/b', '[2606:4700::1111]:443/a/b', 'registry.example.com:5000/a', '127.0.0.1:5999/mirror/app:1', 'mirror.local:5000/app']) {
      const res = await post('/v2/pods', { name: `ok-${Math.random().toString(36).slice(2)}`, image, gpu: { id: H100 } });
      expect(res.status, `${image}: ${await res.clone().text()}`).toBe(201);
    }
  });

  test('GPUFLEET_ALLOWED_REGISTRIES: host[:port] entries, lower-cased; an entry no image can name is warned about', () => {
    expect(configFromEnv({ GPUFLEET_ALLOWED_REGISTRIES: ' Mirror.Corp:5000, 127.0.0.1:5999 ,[::1]:5000,' }).allowedRegistries).toEqual(['mirror.corp:5000', '127.0.0.1:5999', '[::1]:5000']);
    expect(configFromEnv({}).allowedRegistries).toEqual([]);
    const warned = configWarnings(configFromEnv({ GPUFLEET_ALLOWED_REGISTRIES: 'http://mirror.corp:5000,mirror.corp:5000' }));
    expect(warned.filter((w) => w.includes('GPUFLEET_ALLOWED_REGISTRIES'))).toEqual([expect.stringContaining('"http://mirror.corp:5000"')]);
    expect(imageRegistryRefusal('[::1]:5000/x', ['[::1]:5000'])).toBeNull();
    expect(imageRegistryRefusal('[::1]:5000/x', [])).toMatch(/^names the registry \[::1\]:5000, a loopback/);
  });

  test('upgrade: at start the control plane logs each registry stored pods, templates and endpoints name that the rule refuses', async () => {
    // records written while the operator allowed these registries, then a start without the allow list
    const ep = (await (
      await post('/v2/serverless', { name: 'mirror-e', type: 'QUEUE', image: 'mirror.local:5000/worker:1', scaling: { type: 'REQUEST_COUNT', requestCount: 1 }, gpu: { pools: ['ADA_24'], count: 1 }, workers: { min: 0, max: 1 } })
    ).json()) as J;
    const pod = (await (await post('/v2/pods', { name: 'mirror-p', image: '127.0.0.1:5999/mirror/app:2', gpu: { id: H100 } })).json()) as J;
    expect(ep.id && pod.id).toBeTruthy();
    const templateId = (await cp.services.store.get('endpoints', ep.id))!.templateId;
    await cp.close();
    let logs = '';
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        logs += chunk.toString();
        cb();
      },
    });
    cp = await startTestControlPlane({ dataDir, logger: pino({ level: 'warn' }, sink) });
    const lines = await waitFor('the registry warnings', async () => {
      const found = logs.split('\n').filter((l) => l.includes('GPUFLEET_ALLOWED_REGISTRIES') && l.includes('stored record'));
      return found.some((l) => l.includes('"registry":"127.0.0.1:5999"')) && found.some((l) => l.includes('"registry":"mirror.local:5000"')) ? found : null;
    }, 15_000);
    // (names that do not resolve from this machine, such as ghcr.io offline, are listed as well)
    const byRegistry = Object.fromEntries(lines.map((l) => JSON.parse(l) as J).map((l) => [l.registry, l]));
    expect(byRegistry['127.0.0.1:5999'].usedBy).toEqual(expect.arrayContaining([`pod ${pod.id}`]));
    expect(byRegistry['mirror.local:5000'].usedBy).toEqual(expect.arrayContaining([`endpoint ${ep.id} (template ${templateId})`]));
    expect(byRegistry['mirror.local:5000'].usedBy.some((u: string) => u.startsWith('template '))).toBe(true);
    expect(byRegistry['mirror.local:5000'].level).toBe(40); // warn
    // the public registries the earlier tests stored are not named
    expect(logs).not.toContain('93.184.216.34');
  });
});
