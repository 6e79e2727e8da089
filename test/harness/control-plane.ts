// Boots a real control plane for tests and benchmarks: in-process (gpufleet/testing's
// startLocalControlPlane, on the suite's store) or as a child process that a test can SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseQuotas, type ServerConfig } from '../../api/index.ts';
import { startLocalControlPlane, TEST_ADMIN_KEY, type LocalControlPlane, type LocalControlPlaneOptions } from '../../testing/index.ts';
import { freshTestDatabase, TEST_SECRET_KEY, TEST_STORE } from './test-store.ts';
import { freePort } from './free-port.ts';

export { freePort };

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const ADMIN_KEY = TEST_ADMIN_KEY;

/** a control plane of gpufleet/testing (testing/control-plane.ts), with the suite's defaults */
export type TestControlPlane = LocalControlPlane;

export interface TestControlPlaneOptions extends LocalControlPlaneOptions {
  rateLimits?: string;
  reconcileIntervalMs?: number;
  metricsIntervalMs?: number;
}

/** under GPUFLEET_TEST_STORE=postgres: the database of each data directory, so a restart on it finds its state */
const databaseOfDataDir = new Map<string, string>();

/** The store settings of a test control plane: none (embedded), or a database of its own (postgres). */
async function testStoreConfig(dataDir: string, config: Partial<ServerConfig> | undefined): Promise<Partial<ServerConfig>> {
  // a test that names a database (or databaseUrl: undefined, the embedded store) keeps its choice
  if (TEST_STORE !== 'postgres' || (config !== undefined && 'databaseUrl' in config)) return {};
  let url = databaseOfDataDir.get(dataDir);
  if (!url) databaseOfDataDir.set(dataDir, (url = await freshTestDatabase()));
  return { databaseUrl: url, secretKey: TEST_SECRET_KEY };
}

/** startLocalControlPlane with the suite's store (GPUFLEET_TEST_STORE), rate limits and quick reconcile passes */
export async function startTestControlPlane(opts: TestControlPlaneOptions = {}): Promise<TestControlPlane> {
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'gpufleet-cp-')));
  const cp = await startLocalControlPlane({
    ...opts,
    dataDir,
    config: {
      ...(await testStoreConfig(dataDir, opts.config)),
      rateLimits: parseQuotas(opts.rateLimits),
      reconcileIntervalMs: opts.reconcileIntervalMs ?? 500,
      metricsIntervalMs: opts.metricsIntervalMs ?? 10_000,
      ...opts.config,
    },
  });
  return {
    ...cp,
    async close() {
      await cp.close();
      if (!opts.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface SpawnedControlPlane {
  url: string;
  adminKey: string;
  dataDir: string;
  proc: ChildProcess;
  /** resolves when the process has exited */
  exited: Promise<number | null>;
  /** what it wrote so far, stdout (its log lines, JSON) and stderr together */
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * `node bin/gpufleet.js serve` as a child process, ready once it answers /healthz; `root`: another
 * checkout's (an older version, test/harness/older-checkout.ts), default this one.
 */
export async function spawnControlPlane(opts: {
  dataDir: string;
  port: number;
  env?: Record<string, string>;
  root?: string;
  /** how long it may take to answer /healthz (default 30 s; tsx compiles the sources first, slow on a loaded machine) */
  startTimeoutMs?: number;
}): Promise<SpawnedControlPlane> {
  const root = opts.root ?? REPO_ROOT;
  const proc = spawn(process.execPath, [path.join(root, 'bin/gpufleet.js'), 'serve'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(opts.port),
      HOST: '127.0.0.1',
      GPUFLEET_DATA_DIR: opts.dataDir,
      GPUFLEET_BOOTSTRAP_KEY: ADMIN_KEY,
      GPUFLEET_LOG_LEVEL: 'warn',
      // the sources as they are (tsx), not dist/: benches call this too, outside vitest's GPUFLEET_DEV
      GPUFLEET_DEV: '1',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let output = '';
  proc.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
    output += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${opts.port}`;
  const deadline = Date.now() + (opts.startTimeoutMs ?? 30_000);
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`control plane exited early: ${stderr}`);
    try {
      if ((await fetch(url + '/healthz')).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      // a test that gives up must not leave the process running (it would outlive the whole run)
      proc.kill('SIGKILL');
      await exited;
      throw new Error(`control plane did not start: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    adminKey: ADMIN_KEY,
    dataDir: opts.dataDir,
    proc,
    exited,
    output: () => output,
    async kill(signal = 'SIGTERM') {
      if (proc.exitCode === null) proc.kill(signal);
      await exited;
    },
  };
}

/** an answer of spawnedAdminApi: the status, and the JSON body (null on 204) */
export interface AdminApiAnswer {
  status: number;
  body: Record<string, any> | null;
}

/**
 * The API of a child control plane, called with its admin key: `api(path, { method, json })`.
 * `current` answers the plane of the moment, so the function goes on working across restarts.
 */
export function spawnedAdminApi(current: () => SpawnedControlPlane | null): (p: string, init?: { method?: string; json?: unknown }) => Promise<AdminApiAnswer> {
  return async (p, init = {}) => {
    const cp = current()!;
    const res = await fetch(cp.url + p, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${cp.adminKey}`, ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: init.json !== undefined ? JSON.stringify(init.json) : undefined,
    });
    return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as Record<string, any>) };
  };
}

/** A free TCP port on loopback. */
