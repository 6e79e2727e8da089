// A `docker` wrapper first on a test host's PATH that can hold `docker run` / `docker create` on the
// host until the test releases it, so a test can make a fault (SIGKILL of the control plane, a lost
// connection) land while the command is in flight, not before or after it. Every other docker
// command goes straight to the real binary. Opt in with `startTestHost({ dockerRunGate: true })`.
//
// The wrapper talks to the test through files in `<host dir>/docker-gate/`: each held call appends
// a line `<pid> <container name>` to `held`; the file `open` lets every held and later call through;
// the file `abort` makes them exit 125 without running docker. So does a call held past the limit, or
// whose gate dir is gone (the host was disposed): a test that fails while holding must leave neither
// a control plane waiting on a command forever nor a container created after its clean-up.
import { execFile } from 'node:child_process';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** how long a held call waits for release before it gives up (exit 125) */
const HOLD_LIMIT_S = 180;

export interface DockerRunGate {
  /** container names (`--name=`) of the run/create calls that reached the host while held, in order */
  held(): Promise<string[]>;
  /** resolves with held() once it has at least `n` entries */
  waitHeld(n: number, timeoutMs?: number): Promise<string[]>;
  /** from now on, `docker run`/`create` on this host waits until release() */
  hold(): Promise<void>;
  /** lets every held and later call through (held() keeps answering who was held, until hold()) */
  release(): Promise<void>;
  /** held and later calls fail (exit 125) without reaching docker, until hold() or release(); for clean-up */
  abort(): Promise<void>;
  /** true between hold() and release() */
  readonly holding: boolean;
}

/** Writes the wrapper into `binDir` (first on the host's PATH) and answers its gate, released. */
export async function installDockerRunGate(hostDir: string, binDir: string): Promise<DockerRunGate> {
  const gateDir = join(hostDir, 'docker-gate');
  await mkdir(gateDir, { recursive: true });
  const real = await realDocker();
  const target = join(binDir, 'docker');
  const tmp = `${target}.${process.pid}.tmp`;
  await writeFile(tmp, wrapperScript(gateDir, real));
  await chmod(tmp, 0o755);
  await rename(tmp, target);
  const gate = new FileGate(gateDir);
  await gate.release();
  return gate;
}

class FileGate implements DockerRunGate {
  holding = false;
  constructor(private readonly dir: string) {}

  async held(): Promise<string[]> {
    const text = await readFile(join(this.dir, 'held'), 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((l) => l.length > 0)
      .map((l) => l.slice(l.indexOf(' ') + 1));
  }

  async waitHeld(n: number, timeoutMs = 30_000): Promise<string[]> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const h = await this.held();
      if (h.length >= n) return h;
      if (Date.now() > end) throw new Error(`docker run gate: ${h.length} of ${n} calls held after ${timeoutMs} ms (${h.join(', ')})`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async hold(): Promise<void> {
    await rm(join(this.dir, 'held'), { force: true });
    await rm(join(this.dir, 'open'), { force: true });
    await rm(join(this.dir, 'abort'), { force: true });
    this.holding = true;
  }

  async release(): Promise<void> {
    await rm(join(this.dir, 'abort'), { force: true });
    await writeFile(join(this.dir, 'open'), '');
    this.holding = false;
  }

  async abort(): Promise<void> {
    await writeFile(join(this.dir, 'abort'), '');
    this.holding = false;
  }
}

async function realDocker(): Promise<string> {
  const { stdout } = await run('sh', ['-c', 'command -v docker'], { env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' } });
  const path = stdout.trim();
  if (!path.startsWith('/')) throw new Error(`docker run gate: no docker binary on the standard PATH (${stdout})`);
  return path;
}

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function wrapperScript(gateDir: string, realDockerPath: string): string {
  const g = sq(gateDir);
  // stdin is left alone: `docker run --env-file /dev/stdin` reads it after the exec
  return `#!/bin/sh
# test harness (testing/docker-run-gate.ts): holds docker run/create until ${gateDir}/open exists
sub=$1
[ "$sub" = container ] && sub=$2
case "$sub" in
  run|create)
    [ -e ${g}/abort ] && { echo 'docker run gate: aborted' >&2; exit 125; }
    if [ ! -e ${g}/open ]; then
      name=
      for a in "$@"; do case "$a" in --name=*) name=\${a#--name=};; esac; done
      echo "$$ \${name:-?}" >> ${g}/held
      i=0
      while [ -d ${g} ] && [ ! -e ${g}/open ] && [ ! -e ${g}/abort ] && [ $i -lt ${HOLD_LIMIT_S * 20} ]; do sleep 0.05; i=$((i + 1)); done
      [ -e ${g}/open ] && [ ! -e ${g}/abort ] || { echo 'docker run gate: not released' >&2; exit 125; }
    fi
    ;;
esac
exec ${sq(realDockerPath)} "$@"
`;
}
