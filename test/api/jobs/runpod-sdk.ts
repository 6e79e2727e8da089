// runpod-sdk (the public platform's JS client, from npm, unmodified). Version 1.1.2 ships its
// src/index.ts but not the dist/ its `main` names, so it is built here as its own build would, with
// esbuild, into a temporary folder laid out like the package (its code reads ../../package.json).
import { copyFile, mkdir, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { REPO_ROOT } from '../../harness/control-plane.ts';

/** the parts of the SDK the tests use, as its src/index.ts types them */
export interface RunpodEndpoint {
  run(req: unknown, timeout?: number): Promise<any>;
  runSync(req: unknown, timeout?: number): Promise<any>;
  status(id: string, timeout?: number): Promise<any>;
  statusSync(id: string, timeout?: number): Promise<any>;
  stream(id: string, timeout?: number): AsyncGenerator<any>;
  cancel(id: string, timeout?: number): Promise<any>;
  health(timeout?: number): Promise<any>;
  purgeQueue(timeout?: number): Promise<any>;
}
export type RunpodSdkFactory = (apiKey: string, options: { baseUrl: string }) => { endpoint(id: string): RunpodEndpoint | null };

let loaded: Promise<RunpodSdkFactory> | undefined;

export function loadRunpodSdk(): Promise<RunpodSdkFactory> {
  loaded ??= (async () => {
    const pkg = path.join(REPO_ROOT, 'node_modules/runpod-sdk');
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-runpod-sdk-'));
    const outfile = path.join(dir, 'dist/src/index.mjs');
    await mkdir(path.dirname(outfile), { recursive: true });
    await build({ entryPoints: [path.join(pkg, 'src/index.ts')], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile, logLevel: 'silent' });
    await copyFile(path.join(pkg, 'package.json'), path.join(dir, 'package.json'));
    const mod = (await import(pathToFileURL(outfile).href)) as { default: RunpodSdkFactory };
    return mod.default;
  })();
  return loaded;
}
