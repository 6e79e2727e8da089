// runpod-python's job client (`runpod.Endpoint`, unmodified, from ../shared/peers/) as a test client:
// one /usr/bin/python3 process running runpod_endpoint_driver.py against a control plane's /v2.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { runpodPythonPath } from '../graphql/runpod-python-client.ts';

const DRIVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'runpod_endpoint_driver.py');

export type PyAnswer = { ok: any } | { error: { type: string; message: string } };

export interface EndpointOp {
  op: 'run' | 'run_sync' | 'status' | 'output' | 'stream' | 'cancel' | 'health' | 'purge_queue';
  endpoint?: string;
  apiKey?: string;
  request?: unknown;
  job?: string;
  timeout?: number;
}

export class RunpodPythonEndpoint {
  private readonly pending: ((a: PyAnswer) => void)[] = [];
  private stderr = '';

  private constructor(
    private readonly proc: ChildProcessWithoutNullStreams,
    private readonly home: string,
  ) {
    proc.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    createInterface({ input: proc.stdout }).on('line', (line) => this.pending.shift()?.(JSON.parse(line) as PyAnswer));
    proc.on('exit', (code) => {
      for (const p of this.pending.splice(0)) p({ error: { type: 'DriverExited', message: `exit ${code}: ${this.stderr}` } });
    });
  }

  /** `base` is the control plane's `/v2` URL; HOME is a scratch folder so no ~/.runpod/config.toml is read */
  static async start(base: string): Promise<RunpodPythonEndpoint> {
    const pp = await runpodPythonPath();
    const home = await mkdtemp(path.join(os.tmpdir(), 'gpufleet-runpod-endpoint-'));
    const proc = spawn('/usr/bin/python3', [DRIVER, base], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, PYTHONPATH: pp, PYTHONUNBUFFERED: '1', NO_PROXY: '127.0.0.1,localhost', no_proxy: '127.0.0.1,localhost' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    return new RunpodPythonEndpoint(proc, home);
  }

  send(op: EndpointOp): Promise<PyAnswer> {
    return new Promise((resolve) => {
      this.pending.push(resolve);
      this.proc.stdin.write(JSON.stringify(op) + '\n');
    });
  }

  /** what the client returned; an exception it raised fails the call */
  async call(op: EndpointOp): Promise<any> {
    const a = await this.send(op);
    if ('error' in a) throw new Error(`runpod.Endpoint ${op.op} raised ${a.error.type}: ${a.error.message}`);
    return a.ok;
  }

  async close(): Promise<void> {
    const gone = new Promise((r) => this.proc.once('exit', r));
    this.proc.stdin.end();
    await gone;
    await rm(this.home, { recursive: true, force: true });
  }
}
