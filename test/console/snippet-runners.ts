// Runs the console's generated code as a user would: the cURL snippet in sh, the Python one with
// Debian's python3 and the unmodified runpod-python from ../shared/peers/, the JavaScript one with
// node and runpod-sdk from npm (built as its own build script would: 1.1.2 ships no dist/). Each gets
// the key only as RUNPOD_API_KEY in its environment, as the snippet expects.
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { REPO_ROOT } from '../harness/control-plane.ts';
import { runpodPythonPath } from '../api/graphql/runpod-python-client.ts';

export type SnippetLanguage = 'curl' | 'python' | 'javascript';

let workDir: Promise<string> | undefined;

/** a folder with node_modules/runpod-sdk laid out as the package would be once built */
function snippetDir(): Promise<string> {
  workDir ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-console-snippets-'));
    const pkg = path.join(REPO_ROOT, 'node_modules/runpod-sdk');
    const into = path.join(dir, 'node_modules/runpod-sdk');
    await mkdir(path.join(into, 'dist/src'), { recursive: true });
    await build({ entryPoints: [path.join(pkg, 'src/index.ts')], bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: path.join(into, 'dist/src/index.js'), logLevel: 'silent' });
    await copyFile(path.join(pkg, 'package.json'), path.join(into, 'package.json'));
    return dir;
  })();
  return workDir;
}

function run(cmd: string, args: string[], env: Record<string, string>, cwd: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { env, cwd, timeout: 120_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${cmd} failed: ${err.message}\n${stderr}\n${stdout}`)) : resolve(stdout))),
  );
}

/** runs `code` (as the page showed it) and answers its standard output */
export async function runSnippet(lang: SnippetLanguage, code: string, key: string): Promise<string> {
  const dir = await snippetDir();
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, RUNPOD_API_KEY: key, NO_PROXY: '*', no_proxy: '*' };
  const n = Math.random().toString(36).slice(2, 8);
  if (lang === 'curl') {
    const file = path.join(dir, `snippet-${n}.sh`);
    await writeFile(file, code);
    return run('sh', [file], env, dir);
  }
  if (lang === 'python') {
    const file = path.join(dir, `snippet-${n}.py`);
    await writeFile(file, code);
    return run('/usr/bin/python3', [file], { ...env, PYTHONPATH: await runpodPythonPath() }, dir);
  }
  const file = path.join(dir, `snippet-${n}.mjs`);
  await writeFile(file, code);
  return run(process.execPath, [file], env, dir);
}
