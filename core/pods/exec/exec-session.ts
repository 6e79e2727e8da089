// An interactive exec session (GET /v2/pods/{id}/exec/ws, docs/pods.md "Interactive exec"): a
// command in a pod's container with its stdin, optionally on a terminal, for as long as the client
// stays, the command runs and neither side is idle longer than the idle timeout. The provisioner
// opens it on the host (ContainerSessionRunner); this decides when it ends and records its start
// and its end, with the exit code, as events of the pod.
import { actorFields, actorOf, type HostRecord, type PodRecord } from '../../../model/index.ts';
import type { EventService } from '../../observability/index.ts';
import { execArgvRecord } from './exec-argv-record.ts';
import type { Principal } from '../../../model/index.ts';

export interface ContainerSessionRequest {
  host: HostRecord;
  podId: string;
  /** argv, checked by core; it comes after the container name */
  argv: readonly string[];
  /** a terminal (`docker exec -t`) of `cols` × `rows`; without, stdout and stderr apart */
  tty: boolean;
  cols: number;
  rows: number;
}

export interface SessionOutput {
  stdout(data: Buffer): void;
  stderr(data: Buffer): void;
}

/** What a session takes from its client, on the host (ContainerSession) as in core (ExecSession). */
export interface SessionControls {
  /** stdin; false when the host takes no more for now: stop reading the client until onInputDrain */
  write(data: Buffer): boolean;
  onInputDrain(listener: () => void): void;
  /** the client's stdin ended (EOF) */
  endInput(): void;
  resize(cols: number, rows: number): void;
  /** stop reading the command's output until resume() (a slow client) */
  pause(): void;
  resume(): void;
  /** the client went: end the command on the host */
  close(): void;
}

/** The command on the host, as the provisioner runs it. */
export interface ContainerSession extends SessionControls {
  /** the command's exit code; null when it was cut off (closed, or the connection lost) */
  exit: Promise<number | null>;
}

/** The port the provisioner implements beside ContainerExecRunner. */
export interface ContainerSessionRunner {
  session(req: ContainerSessionRequest, out: SessionOutput): Promise<ContainerSession>;
}

/** Why a session ended, in its end event and its last message. */
export type SessionEnd = 'exited' | 'client closed' | 'idle timeout' | 'connection lost';

export interface ExecSession extends SessionControls {
  /** settles once the session is over: the exit code (null unless it exited) and why it ended */
  ended: Promise<{ code: number | null; reason: SessionEnd }>;
}

/** idle sessions end after this (GPUFLEET_EXEC_IDLE_TIMEOUT_MS): no byte either way for 30 minutes */
export const DEFAULT_EXEC_IDLE_TIMEOUT_MS = 30 * 60_000;

/** Opens the session on the host, records it, and ends it on exit, close or idleness. */
export async function openExecSession(
  deps: { events: EventService; runner: ContainerSessionRunner; idleTimeoutMs: number },
  principal: Principal,
  pod: PodRecord,
  req: ContainerSessionRequest,
  out: SessionOutput,
): Promise<ExecSession> {
  let timer: NodeJS.Timeout | null = null;
  let endedBy: SessionEnd | null = null;
  let session: ContainerSession | null = null;
  const end = (why: SessionEnd): void => {
    if (endedBy) return;
    endedBy = why;
    session?.close();
  };
  const touch = (): void => {
    if (timer) timer.refresh();
    else timer = setTimeout(() => end('idle timeout'), deps.idleTimeoutMs).unref();
  };
  const seen = (f: (d: Buffer) => void) => (d: Buffer) => {
    touch();
    f(d);
  };
  const s = await deps.runner.session(req, { stdout: seen(out.stdout), stderr: seen(out.stderr) });
  session = s;
  touch();
  const event = (type: string, reason: string) =>
    deps.events.log.append({
      resourceType: 'pod',
      resourceId: pod.id,
      accountId: pod.accountId,
      type,
      status: pod.status,
      previousStatus: pod.status,
      reason,
      ...actorFields(actorOf(principal)),
    });
  const what = `${execArgvRecord(req.argv)}${req.tty ? ` (tty ${req.cols}x${req.rows})` : ''}`;
  event('pod.exec_start', `exec session ${what}`);
  const ended = s.exit.then((code) => {
    if (timer) clearTimeout(timer);
    const reason: SessionEnd = endedBy ?? (code === null ? 'connection lost' : 'exited');
    event('pod.exec_end', `exec session ended (${reason}${code === null ? '' : `, exit code ${code}`}): ${what}`);
    return { code: reason === 'exited' ? code : null, reason };
  });
  return {
    write(d) {
      touch();
      return s.write(d);
    },
    onInputDrain: (l) => s.onInputDrain(l),
    endInput: () => s.endInput(),
    resize: (c, r) => s.resize(c, r),
    pause: () => s.pause(),
    resume: () => s.resume(),
    ended,
    close: () => end('client closed'),
  };
}
