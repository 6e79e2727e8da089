// One `docker pull` on a host, beside the reconcile pass: a long command on the host's background
// SSH connection (SshPool.background) with a PTY, so docker shows its progress (pull-progress.ts),
// and cancelled by closing it (the terminal hangs up: docker gets SIGHUP, and the daemon drops a
// pull no client waits for). Always in a throwaway DOCKER_CONFIG, so a pull never borrows the host's
// own logins; with credentials it logs in there first. The password never rides the command line
// nor the terminal's echo: the script turns echo off, says it is ready, and only then reads it
// (base64, so no byte of it is a terminal control character).
import type { SshPool, SshTarget } from '../fleet/index.ts';
import { shellJoin } from '../fleet/index.ts';
import { END_OF_OPTIONS } from './container-spec.ts';
import { PullProgress, type PullSummary } from './pull-progress.ts';

const READY = 'gpufleet:pull-ready';
/** after the cancel line, the channel is closed from our side if the host has not ended it */
const CANCEL_GRACE_MS = 5000;
const IMAGE_ID = /gpufleet:image-id (sha256:[0-9a-f]{64})/;

export interface PullAuth {
  server: string;
  username: string;
  password: string;
}

export interface PullRequestSpec {
  image: string;
  auth?: PullAuth | undefined;
  /**
   * docker serves a pull by digest from its cache when it already holds that manifest, without asking
   * the registry; when the pull must prove access (the cached copy is private to other accounts), the
   * registry is asked for the manifest first (`insecure`: a registry docker reaches over plain HTTP)
   */
  verifyDigest?: { insecure: boolean } | undefined;
}

export interface PullOutcome {
  /** the image id once pulled; null when the pull failed or was cancelled */
  imageId: string | null;
  /** closed by cancel() (or the connection went) before docker finished */
  cut: boolean;
  /** docker's last lines: for the operator's log, never for a tenant */
  output: string;
}

export interface RunningPull {
  readonly done: Promise<PullOutcome>;
  /** the progress so far */
  summary(): PullSummary;
  cancel(): void;
}

export function pullScript(spec: PullRequestSpec): string {
  const { image, auth, verifyDigest } = spec;
  const login = auth
    ? `echo ${READY}; IFS= read -r pw; printf %s "$pw" | base64 -d | ` +
      `${shellJoin(['docker', 'login', `--username=${auth.username}`, '--password-stdin', END_OF_OPTIONS, auth.server])} >/dev/null; pw=; `
    : '';
  const verify = verifyDigest
    ? `${shellJoin(['docker', 'manifest', 'inspect', ...(verifyDigest.insecure ? ['--insecure'] : []), END_OF_OPTIONS, image])} >/dev/null; `
    : '';
  // sshd neither signals a command nor hangs its terminal up while the command runs, so the cancel is
  // ours: a line on the terminal makes the watcher SIGTERM the command's process group (no job
  // control: the shell, the watcher and docker are all in it). fd 3: an async list's stdin is /dev/null.
  const watcher = `exec 3<&0; { IFS= read -r _ <&3; kill -TERM 0; } & w=$!; `;
  return (
    `stty -echo 2>/dev/null; w=; DOCKER_CONFIG=$(mktemp -d) || exit 3; export DOCKER_CONFIG; ` +
    `trap '[ -z "$w" ] || kill "$w" 2>/dev/null; rm -rf "$DOCKER_CONFIG"' EXIT; trap 'exit 143' HUP INT TERM; ` +
    `${login}${watcher}set -e; ${verify}` +
    `${shellJoin(['docker', 'pull', END_OF_OPTIONS, image])}; ` +
    `id=$(${shellJoin(['docker', 'image', 'inspect', '--format', '{{.Id}}', END_OF_OPTIONS, image])}); echo "gpufleet:image-id $id"`
  );
}

/** Starts the pull; `moved` is told each time docker shows progress. */
export async function startPull(pool: SshPool, target: SshTarget, spec: PullRequestSpec, moved: () => void): Promise<RunningPull> {
  const progress = new PullProgress();
  let seen = '';
  let passwordSent = false;
  let cancelled = false;
  const stream = await pool.background(
    target,
    pullScript(spec),
    {
      stdout: (chunk) => {
        const text = chunk.toString('utf8');
        seen = (seen + text).slice(-4096);
        if (spec.auth && !passwordSent && seen.includes(READY)) {
          passwordSent = true;
          stream.write(Buffer.from(`${Buffer.from(spec.auth.password).toString('base64')}\n`));
        }
        if (progress.feed(text)) moved();
      },
      // a PTY joins stderr to stdout; nothing comes here
      stderr: (chunk) => void progress.feed(chunk.toString('utf8')),
    },
    { pty: { cols: 250, rows: 100 } },
  );
  const done = stream.done.then(({ code }) => {
    const id = code === 0 ? IMAGE_ID.exec(seen)?.[1] ?? null : null;
    return { imageId: id, cut: cancelled || code === null, output: progress.lastLines() };
  });
  return {
    done,
    summary: () => progress.summary(),
    cancel: () => {
      if (cancelled) return;
      cancelled = true;
      // the watcher reads this line (a password not yet asked for: nothing runs yet but the wait for it)
      if (!spec.auth || passwordSent) stream.write(Buffer.from('cancel\n'));
      setTimeout(() => stream.close(), spec.auth && !passwordSent ? 0 : CANCEL_GRACE_MS).unref();
    },
  };
}
