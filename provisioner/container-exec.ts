// Runs a command in a pod's container on its host (core's ContainerExecRunner): `docker exec` over
// the host's SSH stream connection. The argv comes after `--` and the container name, each word
// quoted by fleet's one quoting function (shellJoin): nothing a client sends becomes a docker option
// or a shell word. As with `docker logs --follow` (container-logs.ts), the script watches the
// channel's stdin, so a client that goes (the channel closes) kills `docker exec` at once.
import type { ContainerExec, ContainerExecRequest, ContainerExecRunner, ContainerSession, ContainerSessionRequest, ExecChunk, Services, SessionOutput } from '../core/index.ts';
import { AsyncQueue } from '../core/index.ts';
import { shellJoin, type SshStream } from '../fleet/index.ts';
import { containerName, END_OF_OPTIONS } from './container-spec.ts';
import { ContainerSessions } from './container-session.ts';

/** chunks held for a slow client before the SSH channel is paused */
const HIGH_WATER = 256;

/** The host-side script: `docker exec -- <container> <argv…>` in the background, killed when stdin reaches EOF. */
export function execScript(req: Pick<ContainerExecRequest, 'podId' | 'argv'>): string {
  const argv = ['docker', 'exec', END_OF_OPTIONS, containerName(req.podId), ...req.argv];
  return (
    `exec 3<&0; ${shellJoin(argv)} </dev/null 3<&- & p=$!; ` +
    `{ cat <&3 >/dev/null 2>&1; kill $p 2>/dev/null; } >/dev/null 2>&1 & w=$!; exec 3<&-; ` +
    `wait $p; r=$?; kill $w 2>/dev/null; exit $r`
  );
}

export class ContainerExecs implements ContainerExecRunner {
  private readonly sessions: ContainerSessions;

  constructor(private readonly s: Services) {
    this.sessions = new ContainerSessions(s);
  }

  /** an interactive session (container-session.ts) */
  session(req: ContainerSessionRequest, out: SessionOutput): Promise<ContainerSession> {
    return this.sessions.session(req, out);
  }

  async exec(req: ContainerExecRequest): Promise<ContainerExec> {
    let stream: SshStream | null = null;
    const queue = new AsyncQueue<ExecChunk>({
      highWater: HIGH_WATER,
      onFull: () => stream?.pause(),
      onDrained: () => stream?.resume(),
      onCancel: () => stream?.close(),
    });
    stream = await this.s.sshPool.stream(this.s.fleet.target(req.host), execScript(req), {
      stdout: (data) => queue.push({ stream: 'stdout', data }),
      stderr: (data) => queue.push({ stream: 'stderr', data }),
    });
    const s = stream;
    const exit = s.done.then(({ code }) => {
      queue.end();
      return code;
    });
    return { output: queue, exit, close: () => s.close() };
  }
}
