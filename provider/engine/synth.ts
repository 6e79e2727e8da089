// Synthesis as the cdktf CLI does it: run the `app` command of a folder's cdktf.json with
// CDKTF_OUTDIR pointing at a temp dir (and the context in CDKTF_CONTEXT_JSON), then read
// manifest.json and each stack's cdk.tf.json back into the resources the engine plans.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { RESOURCE_KINDS, TRIGGER, type ResourceKind } from '../contract/triggers.ts';
import { refsIn, specHash, unescapeTemplate } from '../contract/spec-codec.ts';

export interface DesiredResource {
  /** Terraform address, `null_resource.<name>`: what references in other specs name */
  address: string;
  kind: ResourceKind;
  /** construct path below the stack (the `gpufleet:path` tag) */
  path: string;
  spec: Record<string, unknown>;
  hash: string;
  /** addresses this spec refers to (its dependencies) */
  refs: string[];
}

export interface DesiredStack {
  name: string;
  resources: DesiredResource[];
}

export class SynthError extends Error {
  override readonly name = 'SynthError';
}

/** Runs the app of `appDir`/cdktf.json and returns its stacks. */
export async function synthApp(appDir: string): Promise<DesiredStack[]> {
  const configPath = path.join(appDir, 'cdktf.json');
  let config: { app?: string; context?: Record<string, unknown> };
  try {
    config = JSON.parse(await readFile(configPath, 'utf8')) as typeof config;
  } catch (e) {
    throw new SynthError(`Cannot read ${configPath}: ${(e as Error).message}`);
  }
  if (!config.app) throw new SynthError(`${configPath} has no "app" command`);
  const outdir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-synth-'));
  try {
    await runApp(config.app, appDir, {
      CDKTF_OUTDIR: outdir,
      CDKTF_CONTEXT_JSON: JSON.stringify(config.context ?? {}),
    });
    return await readSynthDir(outdir);
  } finally {
    await rm(outdir, { recursive: true, force: true });
  }
}

function runApp(command: string, cwd: string, env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, { cwd, shell: true, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (e) => reject(new SynthError(`Cannot run "${command}": ${e.message}`)));
    child.on('exit', (code) => {
      if (code === 0) return resolve();
      // cdktf's validation failure carries the construct paths and JSONPath messages; show it alone
      const m = /Validation failed with the following errors:[\s\S]*?(?=\n\s*If you wish to ignore|$)/.exec(stderr);
      reject(new SynthError(`Synthesis failed ("${command}" exited ${code}):\n${(m?.[0] ?? stderr).trim()}`));
    });
  });
}

/** Reads an output directory written by `app.synth()`. */
export async function readSynthDir(outdir: string): Promise<DesiredStack[]> {
  const manifest = JSON.parse(await readFile(path.join(outdir, 'manifest.json'), 'utf8')) as {
    stacks: Record<string, { name: string; synthesizedStackPath: string }>;
  };
  const stacks: DesiredStack[] = [];
  for (const s of Object.values(manifest.stacks)) {
    const json = JSON.parse(await readFile(path.join(outdir, s.synthesizedStackPath), 'utf8')) as unknown;
    stacks.push(parseStackJson(s.name, json));
  }
  return stacks;
}

/** Reads one cdk.tf.json (also what the Terraform provisioners hand to `--tf-json`). */
export async function readTfJson(file: string): Promise<DesiredStack> {
  const json = JSON.parse(await readFile(file, 'utf8')) as { '//'?: { metadata?: { stackName?: string } } };
  const name = json['//']?.metadata?.stackName;
  if (!name) throw new SynthError(`${file} is not a cdktf stack (no //.metadata.stackName)`);
  return parseStackJson(name, json);
}

export function parseStackJson(name: string, json: unknown): DesiredStack {
  const nulls = ((json as { resource?: { null_resource?: Record<string, { triggers?: Record<string, string> }> } }).resource
    ?.null_resource ?? {}) as Record<string, { triggers?: Record<string, string> }>;
  const resources: DesiredResource[] = [];
  for (const [tfName, res] of Object.entries(nulls)) {
    const t = res.triggers ?? {};
    const kind = t[TRIGGER.kind] as ResourceKind | undefined;
    if (!kind) continue; // somebody else's null_resource
    if (!RESOURCE_KINDS.includes(kind)) throw new SynthError(`null_resource.${tfName}: unknown gpufleet kind "${kind}"`);
    const specText = t[TRIGGER.spec] ?? '{}';
    const spec = JSON.parse(unescapeTemplate(specText)) as Record<string, unknown>;
    resources.push({
      address: `null_resource.${tfName}`,
      kind,
      path: t[TRIGGER.path] ?? tfName,
      spec,
      hash: t[TRIGGER.hash] ?? specHash(specText),
      refs: refsIn(spec),
    });
  }
  const paths = new Set<string>();
  for (const r of resources) {
    if (paths.has(r.path)) throw new SynthError(`stack ${name}: two resources share the path "${r.path}"`);
    paths.add(r.path);
  }
  return { name, resources };
}
