// A real private registry for tests: Debian's `docker-registry` (distribution 2.x) with htpasswd
// auth, owned by the test: its own config, users and storage in a temp dir, on a free loopback port.
// Docker treats 127.0.0.0/8 registries as insecure, so plain HTTP works without daemon changes.
// Logins happen in a throwaway DOCKER_CONFIG: the engine's own client config is never touched.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.ts';

const run = promisify(execFile);
const REGISTRY_BIN = '/usr/bin/docker-registry';

export interface PrivateRegistry {
  /** `127.0.0.1:<port>`, the registry part of image references */
  readonly address: string;
  /**
   * Tags the local image `source` as `<address>/<repo>`, pushes it as `user`, then removes that local
   * tag (the engine keeps `source`); answers the reference and the manifest digest the registry holds.
   */
  push(source: string, repo: string, user: string): Promise<{ ref: string; digest: string }>;
  /** the registry's own log, for debugging failed tests */
  logs(): string;
  close(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/** Starts a registry that accepts exactly `users` (name → password), all of them allowed to push and pull. */
export async function startPrivateRegistry(users: Record<string, string>): Promise<PrivateRegistry> {
  await access(REGISTRY_BIN).catch(() => {
    throw new Error(`${REGISTRY_BIN} is missing: .ci/host-deps.sh installs the docker-registry and apache2-utils packages`);
  });
  const dir = await mkdtemp(join(tmpdir(), 'gpufleet-registry-'));
  const lines = await Promise.all(Object.entries(users).map(async ([u, p]) => (await run('htpasswd', ['-Bbn', u, p])).stdout.trim()));
  await writeFile(join(dir, 'htpasswd'), `${lines.join('\n')}\n`);
  for (let attempt = 0; ; attempt++) {
    const address = `127.0.0.1:${await freePort()}`;
    await writeFile(
      join(dir, 'config.yml'),
      [
        'version: 0.1',
        'log:',
        '  level: warn',
        'storage:',
        '  filesystem:',
        `    rootdirectory: ${join(dir, 'data')}`,
        'http:',
        `  addr: ${address}`,
        'auth:',
        '  htpasswd:',
        '    realm: gpufleet-test',
        `    path: ${join(dir, 'htpasswd')}`,
        '',
      ].join('\n'),
    );
    let log = '';
    const proc = spawn(REGISTRY_BIN, ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(proc);
    const exited = new Promise<void>((r) => proc.once('exit', () => (live.delete(proc), r())));
    for (const s of [proc.stdout, proc.stderr]) s.setEncoding('utf8').on('data', (d: string) => (log = (log + d).slice(-64 * 1024)));
    if (await answers(address, proc)) return registry(address, dir, users, proc, exited, () => log);
    proc.kill('SIGKILL');
    await exited;
    // another process may have taken the port between our probe and the registry's bind
    if (attempt >= 4 || !/address already in use/i.test(log)) {
      await rm(dir, { recursive: true, force: true });
      throw new Error(`docker-registry did not start:\n${log}`);
    }
  }
}

/** Ready once /v2/ asks for credentials (401), as an htpasswd registry does. */
async function answers(address: string, proc: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && proc.exitCode === null) {
    try {
      if ((await fetch(`http://${address}/v2/`)).status === 401) return true;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

function registry(address: string, dir: string, users: Record<string, string>, proc: ChildProcess, exited: Promise<void>, logs: () => string): PrivateRegistry {
  return {
    address,
    logs,
    async push(source, repo, user) {
      const config = await mkdtemp(join(tmpdir(), 'gpufleet-docker-config-'));
      const docker = (args: string[], stdin?: string) =>
        new Promise<string>((resolve, reject) => {
          const child = execFile('docker', args, { env: { ...process.env, DOCKER_CONFIG: config }, timeout: 120_000 }, (err, stdout, stderr) =>
            err ? reject(new Error(`docker ${args.join(' ')} failed: ${stderr.trim() || err.message}`)) : resolve(stdout),
          );
          child.stdin?.end(stdin ?? '');
        });
      const ref = `${address}/${repo}`;
      try {
        const password = users[user];
        if (password === undefined) throw new Error(`no such registry user: ${user}`);
        await docker(['login', '--username', user, '--password-stdin', address], `${password}\n`);
        await docker(['tag', source, ref]);
        const out = await docker(['push', ref]);
        const digest = /digest: (sha256:[0-9a-f]{64})/.exec(out)?.[1];
        if (!digest) throw new Error(`no digest in push output: ${out}`);
        await docker(['rmi', ref]);
        return { ref, digest };
      } finally {
        await rm(config, { recursive: true, force: true });
      }
    },
    async close() {
      if (proc.exitCode === null) proc.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
