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
  return runProcess(process.execPath, [path.join(REPO_ROOT, 'bin/gpufleet.js'), ...args], { GPUFLEET_URL: env.url, GPUFLEET_API_KEY: env.key, NO_COLOR: '1' }, timeoutMs, 'gpufleet');
}

/** Any program (ssh, scp), stdin closed, with `env` over this process's; killed past `timeoutMs`. */
export function runProcess(cmd: string, args: string[], env: Record<string, string> = {}, timeoutMs = 60_000, name = cmd): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name} ${args.slice(name === 'gpufleet' ? 1 : 0).join(' ')} ran past ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
