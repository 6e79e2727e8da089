// Boots a real control plane for tests, examples and benchmarks: in-process (listening on a free
// port) or as a child process that a test can SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startControlPlane, type ControlPlane, type ServerConfig, type StartOptions } from '../../api/index.ts';
import { parseQuotas } from '../../api/index.ts';
import type { ApiKeyScope } from '../../model/index.ts';
import { freshTestDatabase, TEST_SECRET_KEY, TEST_STORE } from './test-store.ts';
import { freePort } from './free-port.ts';

export { freePort };

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const ADMIN_KEY = 'gf_test_admin_key_0123456789abcdef';

export interface TestControlPlane extends ControlPlane {
  adminKey: string;
  dataDir: string;
  /** fetch against the control plane with a key (the admin key by default) */
  api(path: string, init?: RequestInit & { key?: string | null; json?: unknown }): Promise<Response>;
  /** a new account and a key of `scope` in it */
  newAccount(scope?: ApiKeyScope, balance?: number): Promise<{ accountId: string; key: string }>;
}

export interface TestControlPlaneOptions extends StartOptions {
  dataDir?: string;
  rateLimits?: string;
  reconcileIntervalMs?: number;
  metricsIntervalMs?: number;
  /** address to listen on; default 127.0.0.1 (serverless workers in containers need one the docker bridge reaches: dockerBridgeGateway()) */
  host?: string;
  /** GPUFLEET_WORKER_URL; default: derived from the bound port (docs/serverless.md) */
  workerUrl?: string;
  /** any other setting of the control plane (webhookAllowPrivate, workerPollMs, …) */
  config?: Partial<ServerConfig>;
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

export async function startTestControlPlane(opts: TestControlPlaneOptions = {}): Promise<TestControlPlane> {
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'gpufleet-cp-')));
  const storeConfig = await testStoreConfig(dataDir, opts.config);
  const cp = await startControlPlane(
    {
      ...storeConfig,
      port: 0,
      host: opts.host ?? '127.0.0.1',
      workerUrl: opts.workerUrl,
      dataDir,
      bootstrapKey: ADMIN_KEY,
      rateLimits: parseQuotas(opts.rateLimits),
      provisioner: (opts.background?.length ?? 0) > 0,
      reconcileIntervalMs: opts.reconcileIntervalMs ?? 500,
      metricsIntervalMs: opts.metricsIntervalMs ?? 10_000,
      logLevel: 'silent',
      ...opts.config,
    },
    opts,
  );
  let n = 0;
  const api: TestControlPlane['api'] = (p, init = {}) => {
    const { key = ADMIN_KEY, json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (key !== null) headers.set('authorization', `Bearer ${key}`);
    if (json !== undefined) headers.set('content-type', 'application/json');
    return fetch(cp.url + p, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
  };
  return {
    ...cp,
    adminKey: ADMIN_KEY,
    dataDir,
    api,
    async newAccount(scope = 'read_write', balance = 100) {
      const account = await cp.services.keys.createAccount({ email: `user${++n}-${Date.now()}@test.local`, balance });
      const { key } = await cp.services.keys.createKey({ accountId: account.id, name: 'test', scope });
      return { accountId: account.id, key };
    },
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
export async function spawnControlPlane(opts: { dataDir: string; port: number; env?: Record<string, string>; root?: string }): Promise<SpawnedControlPlane> {
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
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`control plane exited early: ${stderr}`);
    try {
      if ((await fetch(url + '/healthz')).ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`control plane did not start: ${stderr}`);
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
