// Synthesis: the example stack's Terraform JSON is stable (file snapshot), references become
// `${null_resource.x.id}` plus depends_on, and wrong props fail at app.synth() with the very JSONPath
// messages the API answers for the same body.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { App, TerraformStack } from 'cdktf';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GpufleetStack, NetworkVolume, Pod, ServerlessEndpoint, Template } from '../../provider/index.ts';
import { parseStackJson } from '../../provider/engine/synth.ts';
import { dependencyOrder } from '../../provider/engine/plan.ts';
import { REPO_ROOT, type TestControlPlane } from '../harness/control-plane.ts';
import { DC, GPU, startFleet } from './helpers.ts';

const run = promisify(execFile);

describe('the example stack', () => {
  let json: Record<string, unknown>;
  beforeAll(async () => {
    const outdir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-example-'));
    const env: Record<string, string | undefined> = { ...process.env, CDKTF_OUTDIR: outdir };
    for (const k of ['GPUFLEET_EXAMPLE_GPU', 'GPUFLEET_EXAMPLE_DC', 'GPUFLEET_EXAMPLE_STACK']) delete env[k];
    await run(process.execPath, ['--import', 'tsx', 'examples/main.ts'], { cwd: REPO_ROOT, env });
    json = JSON.parse(await readFile(path.join(outdir, 'stacks/example/cdk.tf.json'), 'utf8')) as Record<string, unknown>;
    await rm(outdir, { recursive: true, force: true });
  });

  test('synthesizes the same Terraform JSON every time', async () => {
    await expect(JSON.stringify(json, null, 2) + '\n').toMatchFileSnapshot('__snapshots__/example.cdk.tf.json');
  });

  test('each resource is a null_resource with its canonical spec, and references resolve in dependency order', () => {
    const stack = parseStackJson('example', json);
    expect(stack.resources.map((r) => `${r.kind}:${r.path}`).sort()).toEqual(
      ['endpoint:inference', 'network-volume:datasets', 'pod:etl', 'pod:trainer', 'template:inference-template'],
    );
    const trainer = stack.resources.find((r) => r.path === 'trainer')!;
    expect(trainer.spec.mounts).toEqual({ network: [{ path: '/workspace', volumeId: '${null_resource.datasets.id}' }] });
    expect(trainer.refs).toEqual(['null_resource.datasets']);
    const endpoint = (json.resource as Record<string, Record<string, { depends_on?: string[] }>>).null_resource!.inference!;
    expect(endpoint.depends_on).toEqual(['${null_resource.inference-template}', '${null_resource.datasets}']);
    const order = dependencyOrder(stack.resources).map((r) => r.path);
    expect(order.indexOf('datasets')).toBeLessThan(order.indexOf('trainer'));
    expect(order.indexOf('inference-template')).toBeLessThan(order.indexOf('inference'));
  });
});

describe('bad props fail at synth with the API own messages', () => {
  let cp: TestControlPlane;
  beforeAll(async () => {
    cp = await startFleet();
  });
  afterAll(async () => cp?.close());

  function synthError(build: (s: TerraformStack) => void): string {
    const app = new App({ outdir: path.join(os.tmpdir(), `gpufleet-bad-${process.pid}`) });
    build(new GpufleetStack(app, 'bad'));
    try {
      app.synth();
    } catch (e) {
      return (e as Error).message;
    }
    throw new Error('synth succeeded');
  }

  const cases = [
    {
      what: 'a pod with too many GPUs and an impossible port',
      route: '/v2/pods',
      body: { name: 'trainer', image: 'busybox', gpu: { id: GPU, count: 99 }, ports: ['70000/tcp'] },
      build: (s: TerraformStack, b: object) => new Pod(s, 'trainer', b as never),
      path: 'bad/trainer',
    },
    {
      what: 'a pod with both mount kinds (a 400 mount rule)',
      route: '/v2/pods',
      body: { name: 'both', image: 'busybox', gpu: { id: GPU }, mounts: { persistent: { size: 20, path: '/a' }, network: [{ volumeId: 'v', path: '/b' }] } },
      build: (s: TerraformStack, b: object) => new Pod(s, 'both', b as never),
      path: 'bad/both',
    },
    {
      what: 'a pod with neither gpu nor cpu',
      route: '/v2/pods',
      body: { name: 'nothing', image: 'busybox' },
      build: (s: TerraformStack, b: object) => new Pod(s, 'nothing', b as never),
      path: 'bad/nothing',
    },
    {
      what: 'a volume of size 0',
      route: '/v2/network-volumes',
      body: { name: 'v', size: 0, dataCenterId: DC },
      build: (s: TerraformStack, b: object) => new NetworkVolume(s, 'vol', b as never),
      path: 'bad/vol',
    },
    {
      what: 'a template with a v1 field name',
      route: '/v2/templates',
      body: { name: 't', image: 'busybox', imageName: 'busybox' },
      build: (s: TerraformStack, b: object) => new Template(s, 'tpl', b as never),
      path: 'bad/tpl',
    },
    {
      what: 'an endpoint without GPU types',
      route: '/v1/endpoints',
      body: { templateId: 'tpl_x', gpuTypeIds: [], idleTimeout: 0 },
      build: (s: TerraformStack, b: object) => new ServerlessEndpoint(s, 'ep', b as never),
      path: 'bad/ep',
    },
  ];

  for (const c of cases)
    test(`${c.what}`, async () => {
      const res = await cp.api(c.route, { method: 'POST', json: c.body });
      const problem = (await res.json()) as { code: string; status: number; detail: string; errors: string[] };
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(problem.errors.length).toBeGreaterThan(0);
      const message = synthError((s) => c.build(s, c.body));
      expect(message).toContain(`[${c.path}] ${problem.code} (${problem.status}): ${problem.detail}`);
      for (const line of problem.errors) expect(message).toContain(line);
    });

  test('references stand in as ids while validating, and may not cross stacks', () => {
    const app = new App({ outdir: path.join(os.tmpdir(), `gpufleet-xstack-${process.pid}`) });
    const a = new GpufleetStack(app, 'a');
    const vol = new NetworkVolume(a, 'vol', { name: 'v', size: 10, dataCenterId: DC });
    new Pod(a, 'ok', { name: 'ok', image: 'busybox', cpu: { id: 'cpu3c', vcpuCount: 2, memory: 4 }, mounts: { network: [{ volumeId: vol.id, path: '/v' }] } });
    const b = new GpufleetStack(app, 'b');
    new Pod(b, 'far', { name: 'far', image: 'busybox', gpu: { id: GPU }, mounts: { network: [{ volumeId: vol.id, path: '/v' }] } });
    expect(() => app.synth()).toThrow(/\[b\/far\] refers to a\/vol, which is in another stack/);
  });

  test('ownership tags are reserved', () => {
    const message = synthError((s) => new Pod(s, 'p', { name: 'p', image: 'busybox', gpu: { id: GPU }, tags: { 'gpufleet:stack': 'other' } }));
    expect(message).toContain('[bad/p] $.tags["gpufleet:stack"]: the gpufleet: prefix is reserved for ownership tags');
  });
});
