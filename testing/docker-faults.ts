// A `docker` wrapper first on a test host's PATH that counts the calls of a few docker operations on
// that host (each with the time it reached the host) and fails the next N of them on demand, so a
// test makes a step fail at the moment it names and measures, on the host side, when the control
// plane tried again. Every other call, and every call past its failures, goes to the real binary.
// Opt in with `startTestHost({ dockerFaults: true })` (not together with the docker run gate).
//
// Files in `<host dir>/docker-faults/`: `<op>.calls` gets one line per call (epoch ms); `<op>.fail`
// holds how many calls of that op still fail (exit 1, "docker fault: …" on stderr).
import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** the operations the wrapper counts and can fail */
export type DockerFaultOp = 'network-create' | 'run' | 'stop' | 'restart';

export interface DockerFaults {
  /** the next `n` calls of `op` on this host fail (0: none); replaces what was set before */
  failNext(op: DockerFaultOp, n: number): Promise<void>;
  /** when each call of `op` reached the host (epoch ms), oldest first */
  calls(op: DockerFaultOp): Promise<number[]>;
  /** resolves with calls(op) once there are at least `n` */
  waitCalls(op: DockerFaultOp, n: number, timeoutMs?: number): Promise<number[]>;
}

/** Writes the wrapper into `binDir` (first on the host's PATH); nothing fails until failNext. */
export async function installDockerFaults(hostDir: string, binDir: string): Promise<DockerFaults> {
  const dir = join(hostDir, 'docker-faults');
  await mkdir(dir, { recursive: true });
  const { stdout } = await run('sh', ['-c', 'command -v docker'], { env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' } });
  const real = stdout.trim();
  if (!real.startsWith('/')) throw new Error(`docker faults: no docker binary on the standard PATH (${stdout})`);
  const target = join(binDir, 'docker');
  const tmp = `${target}.${process.pid}.tmp`;
  await writeFile(tmp, wrapperScript(dir, real));
  await chmod(tmp, 0o755);
  await rename(tmp, target);
  return new FileFaults(dir);
}

class FileFaults implements DockerFaults {
  constructor(private readonly dir: string) {}

  async failNext(op: DockerFaultOp, n: number): Promise<void> {
    const file = join(this.dir, `${op}.fail`);
    await writeFile(`${file}.tmp`, `${n}\n`);
    await rename(`${file}.tmp`, file);
  }

  async calls(op: DockerFaultOp): Promise<number[]> {
    const text = await readFile(join(this.dir, `${op}.calls`), 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((l) => l.length > 0)
      .map(Number);
  }

  async waitCalls(op: DockerFaultOp, n: number, timeoutMs = 30_000): Promise<number[]> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const c = await this.calls(op);
      if (c.length >= n) return c;
      if (Date.now() > end) throw new Error(`docker faults: ${c.length} of ${n} calls of ${op} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function wrapperScript(dir: string, realDockerPath: string): string {
  const d = sq(dir);
  // stdin is left alone: `docker run --env-file /dev/stdin` reads it after the exec
  return `#!/bin/sh
# test harness (testing/docker-faults.ts): counts and fails docker operations on demand
op=
case "$1" in run|stop|restart) op=$1;; esac
[ "$1 $2" = "network create" ] && op=network-create
if [ -n "$op" ]; then
  date +%s%3N >> ${d}/$op.calls
  n=$(cat ${d}/$op.fail 2>/dev/null) || n=0
  if [ "\${n:-0}" -gt 0 ]; then
    echo $((n - 1)) > ${d}/$op.fail
    echo "docker fault: $op failed on purpose" >&2
    exit 1
  fi
fi
exec ${sq(realDockerPath)} "$@"
`;
}
