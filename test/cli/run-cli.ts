// Runs the real `bin/gpufleet.js` as a child process against a listening control plane, as a user
// would (GPUFLEET_URL, GPUFLEET_API_KEY), and collects its exit code and output.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from '../harness/control-plane.ts';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], env: { url: string; key: string }, timeoutMs = 30_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin/gpufleet.js'), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, GPUFLEET_URL: env.url, GPUFLEET_API_KEY: env.key, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gpufleet ${args.join(' ')} ran past ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
