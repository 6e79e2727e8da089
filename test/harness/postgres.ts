// A real PostgreSQL for tests: Debian's server binaries, a cluster of the test's own in a temp dir
// (initdb, then pg_ctl) on a free loopback port, trust auth on 127.0.0.1 only. PostgreSQL refuses to
// run as root, so when the tests run as root the cluster belongs to the `postgres` user the package
// creates. `stop()` ends the server (fast shutdown) and removes the directory; `kill()` SIGKILLs the
// postmaster (a crash, for fault tests) and `start()` brings the same cluster back on the same port.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.ts';

const run = promisify(execFile);

export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  readonly port: number;
  /** a new empty database on this cluster; answers its URL */
  createDatabase(name?: string): Promise<string>;
  /** SIGKILL of the postmaster: the database is gone until `start()` */
  kill(): Promise<void>;
  /** starts the (stopped or killed) cluster again on the same port */
  start(): Promise<void>;
  stop(): Promise<void>;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))) : [];
  if (versions.length === 0) throw new Error('PostgreSQL server binaries are missing: .ci/host-deps.sh installs the postgresql package');
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0] as string;
  return join(root, newest, 'bin');
}

/** pg_dump of the database at `url` into `file`: plain SQL, no owners or grants (the fixtures of test/fixtures/upgrade) */
export async function dumpDatabase(url: string, file: string): Promise<void> {
  await run(join(binDir(), 'pg_dump'), ['--no-owner', '--no-privileges', '--format=plain', '--file', file, url]);
}

/** runs a plain SQL dump (dumpDatabase's) into the database at `url`, stopping at its first error */
export async function restoreDatabase(url: string, file: string): Promise<void> {
  await run(join(binDir(), 'psql'), ['--quiet', '--no-psqlrc', '-v', 'ON_ERROR_STOP=1', '--file', file, url], { maxBuffer: 16 << 20 });
}

const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** runs a server binary as the cluster's owner (`postgres` when we are root) */
async function pgRun(bin: string, args: string[]): Promise<string> {
  const file = join(binDir(), bin);
  const { stdout } = asRoot ? await run('runuser', ['-u', 'postgres', '--', file, ...args]) : await run(file, args);
  return stdout;
}

let dbCounter = 0;

export async function startPostgres(): Promise<TestPostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'gpufleet-pg-'));
  const data = join(dir, 'data');
  if (asRoot) {
    await chmod(dir, 0o755);
    await run('chown', ['postgres:postgres', dir]);
  }
  await pgRun('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  const conf = [
    `port = ${port}`,
    `listen_addresses = '127.0.0.1'`,
    `unix_socket_directories = '${dir}'`,
    'max_connections = 200',
    'fsync = on',
    'shared_buffers = 64MB',
  ];
  await writeFile(join(data, 'postgresql.auto.conf'), `${conf.join('\n')}\n`);
  if (asRoot) await run('chown', ['postgres:postgres', join(data, 'postgresql.auto.conf')]);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;

  const start = async () => {
    await pgRun('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start']);
  };
  await start();

  const t: TestPostgres = {
    url,
    port,
    async createDatabase(name) {
      const db = name ?? `gf_${process.pid}_${Date.now().toString(36)}_${++dbCounter}`;
      if (!/^[a-z_][a-z0-9_]*$/.test(db)) throw new Error(`bad database name ${db}`);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${db}`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${db}`;
    },
    async kill() {
      const pidFile = join(data, 'postmaster.pid');
      const pid = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
      if (!(pid > 0)) return;
      const children = await run('pgrep', ['-P', String(pid)]).then(
        (r) => r.stdout.split('\n').filter(Boolean).map(Number),
        () => [] as number[],
      );
      process.kill(pid, 'SIGKILL');
      // the backends notice the postmaster's death and exit on their own; a new postmaster cannot start
      // while one of them still holds the shared memory, so wait for them (and end stragglers)
      const alive = (p: number) => {
        try {
          process.kill(p, 0);
          return true;
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 60 && [pid, ...children].some(alive); i++) await new Promise((r) => setTimeout(r, 50));
      for (const c of children) if (alive(c)) process.kill(c, 'SIGKILL');
      for (let i = 0; i < 60 && children.some(alive); i++) await new Promise((r) => setTimeout(r, 50));
    },
    start,
    async stop() {
      await pgRun('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
  return t;
}
