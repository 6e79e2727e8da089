// A real control plane in this process, listening on a free port of loopback (or the address given),
// with an admin key of its own and a data directory it removes on close: what `gpufleet serve` runs,
// minus the environment. startTestFleet adds the provisioner and test hosts; gpufleet's own suite
// (test/harness/control-plane.ts) starts its control planes through here too.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseQuotas, startControlPlane, type ControlPlane, type ServerConfig, type StartOptions } from '../api/index.ts';
import type { ApiKeyScope } from '../model/index.ts';

/** the admin key of every control plane started here (unless `adminKey` says otherwise): local tests only */
export const TEST_ADMIN_KEY = 'gf_test_admin_key_0123456789abcdef';

export interface LocalControlPlaneOptions extends StartOptions {
  /** its data directory; default: a new temporary one, removed on close() */
  dataDir?: string;
  /** address to listen on; default 127.0.0.1 (serverless workers in containers need one the Docker bridge reaches) */
  host?: string;
  /** GPUFLEET_WORKER_URL; default: derived from the bound port (docs/serverless.md) */
  workerUrl?: string;
  /** the bootstrap admin key; default TEST_ADMIN_KEY */
  adminKey?: string;
  /** any other setting of the control plane (reconcileIntervalMs, databaseUrl, rateLimits, …); wins over the defaults */
  config?: Partial<ServerConfig>;
}

export interface LocalControlPlane extends ControlPlane {
  adminKey: string;
  dataDir: string;
  /** fetch against the control plane with a key (the admin key by default; null: none), `json` sent as the body */
  api(path: string, init?: RequestInit & { key?: string | null; json?: unknown }): Promise<Response>;
  /** a new account (with `balance` dollars of credit, default 100) and a key of `scope` in it */
  newAccount(scope?: ApiKeyScope, balance?: number): Promise<{ accountId: string; key: string }>;
}

export async function startLocalControlPlane(opts: LocalControlPlaneOptions = {}): Promise<LocalControlPlane> {
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'gpufleet-cp-')));
  const adminKey = opts.adminKey ?? TEST_ADMIN_KEY;
  let cp: ControlPlane;
  try {
    cp = await startControlPlane(
      {
        port: 0,
        host: opts.host ?? '127.0.0.1',
        workerUrl: opts.workerUrl,
        dataDir,
        bootstrapKey: adminKey,
        rateLimits: parseQuotas(undefined),
        provisioner: (opts.background?.length ?? 0) > 0,
        reconcileIntervalMs: 2000,
        metricsIntervalMs: 10_000,
        logLevel: 'silent',
        ...opts.config,
      },
      opts,
    );
  } catch (e) {
    if (!opts.dataDir) await rm(dataDir, { recursive: true, force: true });
    throw e;
  }
  let n = 0;
  const api: LocalControlPlane['api'] = (p, init = {}) => {
    const { key = adminKey, json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (key !== null) headers.set('authorization', `Bearer ${key}`);
    if (json !== undefined) headers.set('content-type', 'application/json');
    return fetch(cp.url + p, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body });
  };
  return {
    ...cp,
    adminKey,
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
