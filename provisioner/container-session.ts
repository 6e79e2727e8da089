// Interactive exec sessions on the host (core's ContainerSessionRunner): `docker exec -i [-t]` over a
// channel of the host's stream connection, with a pseudo-terminal there when the client asked for a
// terminal, so `docker exec -t` has one to put in raw mode and to learn its size from (a resize is
// the channel's window-change). The argv comes after `--` and the container name, each word quoted
// by fleet's one quoting function (shellJoin): nothing a client sends becomes a docker option or a
// shell word.
//
// The script first prints one line, `gpufleet-exec <pid>`, its own pid, then execs docker, so that
// pid is the `docker exec` client's. sshd cannot be asked to signal a command (ssh-pool.ts), and
// without a terminal closing the channel only ends the command's stdin, which a `sleep` never
// reads: so when the client goes first, that pid is killed with a command of its own. (With a
// terminal, closing the channel hangs the terminal up as well.) Client input waits for that line,
// so nothing typed is echoed by the host's terminal before `stty raw -echo`.
import type { ContainerSession, ContainerSessionRequest, ContainerSessionRunner, SessionOutput, Services } from '../core/index.ts';
import { shellJoin, type SshStream } from '../fleet/index.ts';
import { containerName, END_OF_OPTIONS } from './container-spec.ts';

const PID_LINE = /^gpufleet-exec (\d{1,10})\r?\n/;
/** longest first line we wait for before giving up on it */
const PID_LINE_MAX = 64;

/** The host-side script of a session. */
export function sessionScript(req: Pick<ContainerSessionRequest, 'podId' | 'argv' | 'tty'>): string {
  const docker = ['docker', 'exec', '-i', ...(req.tty ? ['-t'] : []), END_OF_OPTIONS, containerName(req.podId), ...req.argv];
  return `${req.tty ? 'stty raw -echo 2>/dev/null; ' : ''}printf 'gpufleet-exec %s\\n' "$$"; exec ${shellJoin(docker)}`;
}

export class ContainerSessions implements ContainerSessionRunner {
  constructor(private readonly s: Services) {}

  async session(req: ContainerSessionRequest, out: SessionOutput): Promise<ContainerSession> {
    const target = this.s.fleet.target(req.host);
    let pid: string | null = null;
    let head: Buffer | null = Buffer.alloc(0);
    let held: Buffer[] = [];
    let inputEnded = false;
    let stream: SshStream | null = null;
    const ready = (): void => {
      for (const d of held) stream?.write(d);
      held = [];
      if (inputEnded) stream?.endInput();
    };
    const stdout = (d: Buffer): void => {
      if (head === null) return out.stdout(d);
      head = Buffer.concat([head, d]);
      const m = PID_LINE.exec(head.toString('latin1'));
      if (!m && head.length < PID_LINE_MAX && !head.includes(0x0a)) return;
      const rest = m ? head.subarray(m[0].length) : head;
      pid = m ? m[1]! : null;
      head = null;
      ready();
      if (rest.length) out.stdout(rest);
    };
    stream = await this.s.sshPool.stream(target, sessionScript(req), { stdout, stderr: out.stderr }, req.tty ? { pty: { cols: req.cols, rows: req.rows } } : {});
    const s = stream;
    let over = false;
    const exit = s.done.then(({ code }) => {
      over = true;
      return code;
    });
    return {
      write(d) {
        if (head === null) return s.write(d);
        held.push(d);
        return held.length < 64; // the script has not started yet: hold a little, then push back
      },
      onInputDrain(listener) {
        if (head === null) s.onInputDrain(listener);
        else setTimeout(listener, 50); // held input goes when the script's first line comes
      },
      endInput() {
        inputEnded = true;
        if (head === null) s.endInput();
      },
      resize: (cols, rows) => s.resize(cols, rows),
      pause: () => s.pause(),
      resume: () => s.resume(),
      exit,
      close: () => {
        if (over) return;
        s.close();
        // the docker exec client, if it outlived its channel (validated digits only)
        const p = pid;
        if (p !== null && /^\d{1,10}$/.test(p))
          void this.s.sshPool.exec(target, `kill -TERM ${p} 2>/dev/null; true`, { allowFailure: true }).catch(() => undefined);
      },
    };
  }
}
