// A `docker` wrapper first on a test host's PATH that gives the host container names of its own.
// Test hosts share this machine's one Docker engine, where a name is taken once for all of them; on
// real hosts each engine has its own. A pod that moves from one test host to another keeps its id,
// so both hosts would name its container `gpufleet-<pod id>`: with this wrapper each host's engine
// is its own name space again (`<prefix>gpufleet-<pod id>`), and the old copy on a host that was cut
// off can keep running beside the new one, as it would on a real partitioned host. Only exact
// container names of pods are rewritten (the pod id alphabet, 14 characters); everything else,
// labels (which the control plane reads) included, goes to the real binary unchanged.
// Opt in with `startTestHost({ ownContainerNames: true })`.
import { execFile } from 'node:child_process';
import { chmod, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Writes the wrapper into `binDir`; answers the prefix the host's container names get. */
export async function installDockerOwnNames(binDir: string, hostName: string): Promise<string> {
  const { stdout } = await run('sh', ['-c', 'command -v docker'], { env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' } });
  const real = stdout.trim();
  if (!real.startsWith('/')) throw new Error(`docker own names: no docker binary on the standard PATH (${stdout})`);
  const prefix = `${hostName.replace(/[^A-Za-z0-9_.-]/g, '_')}.`;
  const target = join(binDir, 'docker');
  const tmp = `${target}.${process.pid}.tmp`;
  await writeFile(tmp, wrapperScript(prefix, real));
  await chmod(tmp, 0o755);
  await rename(tmp, target);
  return prefix;
}

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function wrapperScript(prefix: string, realDockerPath: string): string {
  // stdin is left alone: `docker run --env-file /dev/stdin` reads it after the exec
  return `#!/bin/sh
# test harness (testing/docker-own-names.ts): this host's own container names on a shared engine
p=${sq(prefix)}
n=$#
for a in "$@"; do
  case "$a" in
    gpufleet-??????????????) case "\${a#gpufleet-}" in *[!a-z0-9]*) ;; *) a="$p$a";; esac;;
    --name=gpufleet-??????????????) case "\${a#--name=gpufleet-}" in *[!a-z0-9]*) ;; *) a="--name=$p\${a#--name=}";; esac;;
  esac
  set -- "$@" "$a"
done
shift "$n"
exec ${sq(realDockerPath)} "$@"
`;
}
