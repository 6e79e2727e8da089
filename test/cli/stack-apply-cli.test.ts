// The CLI as users and Terraform run it: `node bin/gpufleet.js …` in a child process against a listening
// control plane. At the repo root, cdktf.json synthesizes examples/main.ts.
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ApiClient } from '../../client/api-client.ts';
import { REPO_ROOT, type TestControlPlane } from '../harness/control-plane.ts';
import { listPods, startFleet } from '../provider/helpers.ts';

// each command is a fresh node process that loads the CLI and, without --tf-json, synthesizes the app
const SLOW = { timeout: 180_000 };

let cp: TestControlPlane;
let synthDir: string;
let tfJson: string;
beforeAll(async () => {
  cp = await startFleet();
  synthDir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-cli-synth-'));
  await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/main.ts'], { cwd: REPO_ROOT, env: { ...process.env, CDKTF_OUTDIR: synthDir } });
  tfJson = path.join(synthDir, 'stacks/example/cdk.tf.json');
});
afterAll(async () => {
  await cp?.close();
  await rm(synthDir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Async on purpose: the control plane answers from this process, so a sync spawn would deadlock. */
function cli(key: string, args: string[], opts: { input?: string; cwd?: string; shell?: string } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const env = { ...process.env, GPUFLEET_URL: cp.url, GPUFLEET_API_KEY: key };
    const child = opts.shell
      ? spawn(opts.shell, { shell: true, cwd: opts.cwd, env })
      : spawn(process.execPath, [path.join(REPO_ROOT, 'bin/gpufleet.js'), ...args], { cwd: opts.cwd ?? REPO_ROOT, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(opts.input ?? '');
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test('plan | apply | destroy the example at the repo root, with detailed exit codes', SLOW, async () => {
  const { key } = await cp.newAccount('read_write', 100_000);
  const plan = await cli(key, ['plan', '--detailed-exitcode']);
  expect(plan.code, plan.stderr).toBe(2);
  expect(plan.stdout).toContain('  + pod.trainer\n');
  expect(plan.stdout).toContain('      + networkVolumeId = (known after apply)');
  expect(plan.stdout).toContain('Plan: 5 to add, 0 to change, 0 to destroy.');

  const apply = await cli(key, ['apply', '--auto-approve', '--no-wait']);
  expect(apply.code, apply.stderr).toBe(0);
  expect(apply.stdout).toContain('Apply complete! Resources: 5 added, 0 changed, 0 destroyed.');
  expect(apply.stderr).toMatch(/✔ pod\.trainer: created \[id=\w+\]/);

  const again = await cli(key, ['plan', '--detailed-exitcode', '--json']);
  expect(again.code, again.stderr).toBe(0);
  const json = JSON.parse(again.stdout) as { stack: string; summary: object; changes: { action: string }[] };
  expect(json).toMatchObject({ stack: 'example', summary: { add: 0, change: 0, destroy: 0 } });
  expect(json.changes.map((c) => c.action)).toEqual(['no-op', 'no-op', 'no-op', 'no-op', 'no-op']);

  const destroy = await cli(key, ['destroy', '--auto-approve']);
  expect(destroy.code, destroy.stderr).toBe(0);
  expect(destroy.stdout).toContain('# network-volume.datasets will be destroyed (its data is lost)');
  expect(destroy.stdout).toContain('Resources: 0 added, 0 changed, 5 destroyed.');
});

test('without --auto-approve only the answer "yes" applies', SLOW, async () => {
  const { key } = await cp.newAccount('read_write', 100_000);
  const no = await cli(key, ['apply', '--tf-json', tfJson, '--no-wait'], { input: 'no\n' });
  expect(no.code).toBe(1);
  expect(no.stdout).toContain("Only 'yes' will be accepted to approve.");
  expect(no.stderr).toContain('error: Apply cancelled.');
  const yes = await cli(key, ['apply', '--tf-json', tfJson, '--no-wait'], { input: 'yes\n' });
  expect(yes.code, yes.stderr).toBe(0);
  expect(yes.stdout).toContain('Apply complete! Resources: 5 added');
});

test('a held stack lock makes apply exit 1 and name the holder', SLOW, async () => {
  const { key } = await cp.newAccount('read_write', 100_000);
  await new ApiClient({ url: cp.url, apiKey: key }).post('/v2/stack-locks/example', { holder: 'alice@laptop (apply)' });
  const r = await cli(key, ['apply', '--tf-json', tfJson, '--auto-approve', '--no-wait']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^error: Stack "example" is locked by alice@laptop \(apply\) since /);
  const unlock = await cli(key, ['force-unlock', 'example']);
  expect(unlock.stdout).toBe('Stack "example" unlocked.\n');
});

test('a stack the API would refuse fails at synth with the JSONPath message', SLOW, async () => {
  const { key } = await cp.newAccount('read_write', 100_000);
  const r = await cli(key, ['plan', '--app', 'test/provider/fixtures/bad-app']);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('[bad/trainer] VALIDATION_FAILED (422): The pod failed validation: $.gpu.count: must be <= 16');
});

test("the synth output's own provisioner commands apply and destroy one resource at a time", SLOW, async () => {
  const { key } = await cp.newAccount('read_write', 100_000);
  const api = new ApiClient({ url: cp.url, apiKey: key });
  const json = JSON.parse(await readFile(tfJson, 'utf8')) as {
    resource: { null_resource: Record<string, { provisioner: { 'local-exec': { command: string; when?: string } }[]; triggers: Record<string, string> }> };
  };
  // as Terraform would run them: in the stack's folder, `${self.…}` interpolated, `npx gpufleet` being this checkout's bin
  const command = (name: string, when: 'create' | 'destroy', hash?: string) => {
    const p = json.resource.null_resource[name]!.provisioner.find((x) => (x['local-exec'].when ?? 'create') === when)!;
    return p['local-exec'].command
      .replace('npx gpufleet', `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(REPO_ROOT, 'bin/gpufleet.js'))}`)
      .replace('${self.triggers.gpufleet_hash}', hash ?? json.resource.null_resource[name]!.triggers.gpufleet_hash!);
  };
  const inStack = { cwd: path.dirname(tfJson) };
  const vol = await cli(key, [], { ...inStack, shell: command('datasets', 'create') });
  expect(vol.code, vol.stderr).toBe(0);
  expect(vol.stdout).toContain('Plan: 1 to add, 0 to change, 0 to destroy.');
  const trainer = await cli(key, [], { ...inStack, shell: command('trainer', 'create') + ' --no-wait' });
  expect(trainer.code, trainer.stderr).toBe(0);
  const volumes = (await api.get<{ networkVolumes: { id: string }[] }>('/v2/network-volumes')).networkVolumes;
  expect((await listPods(api)).map((p) => [p.name, p.mounts.network?.[0]?.volumeId])).toEqual([['trainer', volumes[0]!.id]]);

  // Terraform replaces the null_resource on any trigger change: an old hash means "update", keep it
  const update = await cli(key, [], { ...inStack, shell: command('trainer', 'destroy', 'an-older-hash') });
  expect(update.stdout).toContain('trainer: spec changed; Terraform is replacing its null_resource for an update');
  expect(await listPods(api)).toHaveLength(1);
  const destroy = await cli(key, [], { ...inStack, shell: command('trainer', 'destroy') });
  expect(destroy.code, destroy.stderr).toBe(0);
  expect(await listPods(api)).toHaveLength(0);
  expect((await api.get<{ networkVolumes: unknown[] }>('/v2/network-volumes')).networkVolumes).toHaveLength(1);
});
