// runpod-python itself (MIT, unmodified, from ../shared/peers/) as a test client: one /usr/bin/python3
// process running runpod_driver.py, with RUNPOD_API_BASE_URL pointing at a control plane. Tests call
// the SDK's functions by name and get back what the SDK returns, or the exception it raises.
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { REPO_ROOT } from '../../harness/control-plane.ts';

const DRIVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'runpod_driver.py');
/** the peers folder beside the repository (GPUFLEET_PEERS_DIR overrides) */
export const PEERS_DIR = process.env.GPUFLEET_PEERS_DIR ?? path.resolve(REPO_ROOT, '../shared/peers');
const PYTHON = '/usr/bin/python3';

export interface PyCall {
  fn: string;
  args?: unknown[];
  kwargs?: Record<string, unknown>;
  /** this call's key; null: none at all; absent: the client's key */
  apiKey?: string | null;
}

export interface PyError {
  type: string;
  message: string;
}

/** the SDK's results are whatever JSON the server sent back (tests assert on their shape) */
export type PyResult = { ok: any } | { error: PyError };

/** An exception the SDK raised, rethrown on the TypeScript side. */
export class RunpodPythonError extends Error {
  constructor(
    readonly type: string,
    readonly pyMessage: string,
    readonly fn: string,
  ) {
    super(`runpod.${fn} raised ${type}: ${pyMessage}`);
  }
}

let pythonPath: Promise<string> | undefined;

/** PYTHONPATH that makes the unmodified client importable (the setup script installs what is missing once). */
export function runpodPythonPath(): Promise<string> {
  const script = path.join(PEERS_DIR, 'setup-python-peers.sh');
  pythonPath ??= new Promise((resolve, reject) => {
    if (!existsSync(script)) return reject(new Error(`${script} is missing: the runpod-python peer lives in ../shared/peers/ (or set GPUFLEET_PEERS_DIR)`));
    execFile('bash', [script], { timeout: 600_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${script} failed: ${err.message}\n${stderr}`));
      const last = stdout.trim().split('\n').pop() ?? '';
      if (!last) return reject(new Error(`${script} printed no PYTHONPATH`));
      resolve(last);
    });
  });
  return pythonPath;
}

export class RunpodPython {
  private readonly pending: { resolve: (r: PyResult[]) => void; reject: (e: Error) => void }[] = [];
  private stderr = '';
  private exited: Error | null = null;

  private constructor(
    private readonly proc: ChildProcessWithoutNullStreams,
    private readonly home: string,
    /** the key calls use unless they name their own */
    public apiKey: string | null,
  ) {
    proc.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    createInterface({ input: proc.stdout }).on('line', (line) => {
      const waiter = this.pending.shift();
      if (!waiter) return;
      try {
        waiter.resolve(JSON.parse(line) as PyResult[]);
      } catch {
        waiter.reject(new Error(`runpod_driver.py printed a line that is not JSON: ${line.slice(0, 300)}`));
      }
    });
    proc.on('exit', (code, signal) => {
      this.exited = new Error(`runpod_driver.py exited (${code ?? signal}): ${this.stderr}`);
      for (const w of this.pending.splice(0)) w.reject(this.exited);
    });
  }

  /** Starts the client against `baseUrl` (the control plane's origin), with HOME in a scratch folder so no ~/.runpod/config.toml is read. */
  static async start(baseUrl: string, apiKey: string | null): Promise<RunpodPython> {
    const pp = await runpodPythonPath();
    const home = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-runpod-python-'));
    const proc = spawn(PYTHON, [DRIVER], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        PYTHONPATH: pp,
        PYTHONUNBUFFERED: '1',
        RUNPOD_API_BASE_URL: baseUrl,
        NO_PROXY: '127.0.0.1,localhost',
        no_proxy: '127.0.0.1,localhost',
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new RunpodPython(proc, home, apiKey);
  }

  /** Several calls in order; each result is the return value or the exception, never thrown. */
  batch(calls: PyCall[]): Promise<PyResult[]> {
    if (this.exited) return Promise.reject(this.exited);
    return new Promise((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.proc.stdin.write(JSON.stringify({ apiKey: this.apiKey, calls }) + '\n');
    });
  }

  /** One call; what the SDK function returned, or what it raised. */
  async attempt(fn: string, args: unknown[] = [], kwargs: Record<string, unknown> = {}, apiKey?: string | null): Promise<PyResult> {
    const [r] = await this.batch([{ fn, args, kwargs, ...(apiKey !== undefined ? { apiKey } : {}) }]);
    return r!;
  }

  /** One call; what the SDK function returned (a raised exception becomes a RunpodPythonError). */
  async call(fn: string, args: unknown[] = [], kwargs: Record<string, unknown> = {}): Promise<any> {
    const r = await this.attempt(fn, args, kwargs);
    if ('error' in r) throw new RunpodPythonError(r.error.type, r.error.message, fn);
    return r.ok;
  }

  /** One call that must raise; the exception's class name and message. */
  async raises(fn: string, args: unknown[] = [], kwargs: Record<string, unknown> = {}, apiKey?: string | null): Promise<PyError> {
    const r = await this.attempt(fn, args, kwargs, apiKey);
    if (!('error' in r)) throw new Error(`runpod.${fn} returned ${JSON.stringify(r.ok)} where an exception was expected`);
    return r.error;
  }

  async close(): Promise<void> {
    if (!this.exited) {
      const gone = new Promise((r) => this.proc.once('exit', r));
      this.proc.stdin.end();
      await gone;
    }
    await rm(this.home, { recursive: true, force: true });
  }
}

/**
 * Documents the SDK builds, for tests that post them over other transports (no key, a rate-limited
 * server, another account): its get_gpus document, and its get_pod document for any pod id (built by
 * its generator for a placeholder id, which is then replaced).
 */
export async function sdkDocuments(): Promise<{ QUERY_GPU_TYPES: string; podQuery(podId: string): string }> {
  const PLACEHOLDER = 'POD_ID_PLACEHOLDER';
  const py = await RunpodPython.start('http://127.0.0.1:9', null);
  try {
    const [gpus, pod] = await py.batch([{ fn: 'api.queries.gpus.QUERY_GPU_TYPES' }, { fn: 'api.queries.pods.generate_pod_query', args: [PLACEHOLDER] }]);
    if (!gpus || !pod || 'error' in gpus || 'error' in pod) throw new Error(`runpod-python did not build its documents: ${JSON.stringify([gpus, pod])}`);
    const podText = pod.ok as string;
    return { QUERY_GPU_TYPES: gpus.ok as string, podQuery: (podId) => podText.replace(PLACEHOLDER, podId) };
  } finally {
    await py.close();
  }
}
