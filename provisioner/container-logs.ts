// Reads a pod container's log on its host: `docker logs --follow --timestamps` over the host's SSH
// stream connection, split into lines (core's ContainerLogSource). Every docker option is one word
// built here from checked values, and the container name comes after `--`: nothing a client sends
// becomes an option or a shell word. sshd cannot signal the command when the client goes, so the
// script watches its stdin: closing the channel (EOF) kills `docker logs` at once, even if the
// container prints nothing more.
import type { ContainerLogLine, ContainerLogRequest, ContainerLogSource, Services } from '../core/index.ts';
import { AsyncQueue } from '../core/index.ts';
import { shellJoin, type SshStream } from '../fleet/index.ts';
import { GpufleetError } from '../model/index.ts';
import { containerName, END_OF_OPTIONS } from './container-spec.ts';

/** one SSE entry at most this long; a longer line is cut into several entries */
export const MAX_LINE_BYTES = 64 * 1024;
/** lines held for the reader before the SSH channel is paused */
const HIGH_WATER = 2000;
const TIMESTAMPED = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})) ?/;

/** The host-side script: `docker logs` in the background, killed when stdin reaches EOF. */
export function followScript(req: Pick<ContainerLogRequest, 'podId' | 'tail' | 'since' | 'follow'>): string {
  const argv = ['docker', 'logs', ...(req.follow ? ['--follow'] : []), '--timestamps', `--tail=${req.tail}`];
  if (req.since !== null) argv.push(`--since=${req.since}`);
  argv.push(END_OF_OPTIONS, containerName(req.podId));
  // a background command's stdin is /dev/null unless redirected: fd 3 carries the channel's stdin
  return (
    `exec 3<&0; ${shellJoin(argv)} </dev/null 3<&- & p=$!; ` +
    `{ cat <&3 >/dev/null 2>&1; kill $p 2>/dev/null; } >/dev/null 2>&1 & w=$!; exec 3<&-; ` +
    `wait $p; r=$?; kill $w 2>/dev/null; exit $r`
  );
}

/** Splits one stream's bytes into timestamped lines; bytes that are not UTF-8 become U+FFFD. */
class LineSplitter {
  private buf: Buffer = Buffer.alloc(0);
  private lastTs = '';
  /** the last piece emitted was a line cut at the cap: the next piece continues it */
  private continuing = false;
  private readonly decoder = new TextDecoder('utf-8');
  /** text docker itself wrote (its errors come untimestamped on stderr) */
  untimestamped = '';

  constructor(
    private readonly stream: 'stdout' | 'stderr',
    private readonly emit: (l: ContainerLogLine) => void,
  ) {}

  push(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    for (;;) {
      const nl = this.buf.indexOf(0x0a);
      if (nl < 0) break;
      this.line(this.buf.subarray(0, nl));
      this.buf = this.buf.subarray(nl + 1);
    }
    // a line longer than the cap goes out in pieces, the later ones with the first one's timestamp
    while (this.buf.length > MAX_LINE_BYTES) {
      this.line(this.buf.subarray(0, MAX_LINE_BYTES), true);
      this.buf = this.buf.subarray(MAX_LINE_BYTES);
    }
  }

  flush(): void {
    if (this.buf.length) this.line(this.buf);
    this.buf = Buffer.alloc(0);
  }

  private line(bytes: Buffer, partial = false): void {
    const text = this.decoder.decode(bytes);
    const m = this.continuing ? null : TIMESTAMPED.exec(text);
    if (m) {
      this.lastTs = m[1]!;
      this.emit({ stream: this.stream, ts: m[1]!, line: text.slice(m[0].length) });
    } else if (this.continuing) this.emit({ stream: this.stream, ts: this.lastTs, line: text });
    else this.untimestamped = `${this.untimestamped}${text}\n`.slice(-4096);
    this.continuing = partial;
  }
}

export class ContainerLogs implements ContainerLogSource {
  constructor(private readonly s: Services) {}

  async follow(req: ContainerLogRequest): Promise<AsyncIterable<ContainerLogLine>> {
    if (req.tail !== 'all' && !(Number.isInteger(req.tail) && req.tail >= 0)) throw new GpufleetError('INTERNAL', `bad tail ${String(req.tail)}`);
    let stream: SshStream | null = null;
    const queue = new AsyncQueue<ContainerLogLine>({
      highWater: HIGH_WATER,
      onFull: () => stream?.pause(),
      onDrained: () => stream?.resume(),
      onCancel: () => stream?.close(),
    });
    const push = (l: ContainerLogLine): void => queue.push(l);
    const out = new LineSplitter('stdout', push);
    const err = new LineSplitter('stderr', push);
    stream = await this.s.sshPool.stream(this.s.fleet.target(req.host), followScript(req), {
      stdout: (d) => out.push(d),
      stderr: (d) => err.push(d),
    });
    void stream.done.then(({ code }) => {
      out.flush();
      err.flush();
      if (code === 0) return queue.end();
      const said = err.untimestamped.trim().split('\n').pop() ?? '';
      queue.fail(
        /no such container/i.test(said)
          ? new GpufleetError('CONFLICT', `Pod ${req.podId} has no container on its host now (it is being created or was removed).`)
          : code === null
            ? new GpufleetError('HOST_UNREACHABLE', `The connection to host ${req.host.id} was lost while following the log of pod ${req.podId}.`)
            : new GpufleetError('SSH_COMMAND_FAILED', `docker logs on host ${req.host.id} exited ${code}${said ? `: ${said}` : ''}`, { fields: { code } }),
      );
    });
    return queue;
  }
}
