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

export interface RunCliExtra {
  /** written to the command's stdin, then closed (default: no stdin) */
  input?: string;
  /** more environment, over GPUFLEET_URL, GPUFLEET_API_KEY and NO_COLOR=1 (undefined removes one) */
  env?: Record<string, string | undefined>;
}

export function runCli(args: string[], env: { url: string; key: string }, timeoutMs = 30_000, extra: RunCliExtra = {}): Promise<CliResult> {
  return runProcess(
    process.execPath,
    [path.join(REPO_ROOT, 'bin/gpufleet.js'), ...args],
    { GPUFLEET_URL: env.url, GPUFLEET_API_KEY: env.key, NO_COLOR: '1', ...extra.env },
    timeoutMs,
    'gpufleet',
    extra.input,
  );
}

/** Any program (ssh, scp), with `env` over this process's (an undefined value removes one), stdin `input` or closed; killed past `timeoutMs`. */
export function runProcess(cmd: string, args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 60_000, name = cmd, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: REPO_ROOT,
      env: Object.fromEntries(Object.entries({ ...process.env, ...env }).filter(([, v]) => v !== undefined)),
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (input !== undefined) child.stdin!.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
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
