// POST /v2/pods/{id}/exec: one command run in a pod's container on its host (docs/pods.md, "Exec"),
// and GET /v2/pods/{id}/exec/ws, an interactive session (exec-session.ts, "Interactive exec").
// The provisioner runs them over SSH (ContainerExecRunner); this decides who may and when: another
// account's pod is 404, a pod that is not RUNNING 409, no runner or an unreachable host 503, all
// before any output. Every exec is an event of the pod (`pod.exec`; a session's start and end), with
// the program and a digest of its arguments, never the arguments (exec-argv-record.ts). A command or
// a session holds one of the account's share of its host's streams (core/fair-share) while it runs.
import { check, compile, GpufleetError, podExecSchema, actorFields, actorOf, type HostRecord, type PodExecInput, type PodRecord } from '../../../model/index.ts';
import type { StoreReader } from '../../../store/index.ts';
import type { EventService } from '../../observability/index.ts';
import { HostStreamShares } from '../../fair-share/index.ts';
import { DEFAULT_EXEC_IDLE_TIMEOUT_MS, openExecSession, type ContainerSessionRunner, type ExecSession, type SessionOutput } from './exec-session.ts';

import { execArgvRecord } from './exec-argv-record.ts';
import { ExecTickets } from './exec-tickets.ts';
import type { Principal } from '../../../model/index.ts';

export * from './exec-session.ts';
export * from './exec-tickets.ts';

export interface ExecChunk {
  stream: 'stdout' | 'stderr';
  data: Buffer;
}

export interface ContainerExecRequest {
  host: HostRecord;
  podId: string;
  /** argv, checked by the route's schema; it comes after the container name */
  argv: readonly string[];
}

export interface ContainerExec {
  /** the command's output as it comes; ends when the command has exited */
  output: AsyncIterable<ExecChunk>;
  /** the command's exit code; null when the connection was cut */
  exit: Promise<number | null>;
  /** the caller went: stop the command on the host */
  close(): void;
}

/** The port the provisioner implements: run a command in a pod's container, or open a session. */
export interface ContainerExecRunner extends ContainerSessionRunner {
  exec(req: ContainerExecRequest): Promise<ContainerExec>;
}

/** An interactive session's parameters, as the query string of GET /v2/pods/{id}/exec/ws sends them. */
export interface ExecSessionQuery {
  command?: unknown;
  tty?: unknown;
  cols?: unknown;
  rows?: unknown;
}

/** A session checked and ready to open once the WebSocket is up (every refusal comes before it). */
export interface ExecSessionPlan {
  open(out: SessionOutput): Promise<ExecSession>;
}

const TERMINAL_SIZE = /^[1-9]\d{0,3}$/;

const validateExec = compile<PodExecInput>(podExecSchema);

export class PodExecService {
  private runner: ContainerExecRunner | null = null;
  /** single-use tickets for clients that cannot send a key on a WebSocket (browsers) */
  readonly tickets: ExecTickets;

  constructor(
    private readonly store: StoreReader,
    private readonly events: EventService,
    /** interactive sessions with no byte either way for this long end */
    private readonly idleTimeoutMs = DEFAULT_EXEC_IDLE_TIMEOUT_MS,
    private readonly shares = new HostStreamShares(),
  ) {
    this.tickets = new ExecTickets(store);
  }

  /** Called by the provisioner, which reaches the hosts, when it starts in this process. */
  useRunner(runner: ContainerExecRunner | null): void {
    this.runner = runner;
  }

  /** `body` is the request's, unchecked: `{command: [argv…]}` (model/schemas/pod-exec.ts) */
  async exec(principal: Principal, podId: string, body: unknown): Promise<ContainerExec> {
    const argv = checkArgv(body);
    const { pod, host, runner } = await this.target(principal, podId);
    const release = this.shares.acquire(pod.accountId, host.id);
    this.events.log.append({
      resourceType: 'pod',
      resourceId: pod.id,
      accountId: pod.accountId,
      type: 'pod.exec',
      status: pod.status,
      previousStatus: pod.status,
      reason: `exec ${execArgvRecord(argv)}`,
      ...actorFields(actorOf(principal)),
    });
    let run: ContainerExec;
    try {
      run = await runner.exec({ host, podId: pod.id, argv });
    } catch (e) {
      release();
      throw e;
    }
    run.exit.then(release, release);
    return {
      output: run.output,
      exit: run.exit,
      close: () => {
        release();
        run.close();
      },
    };
  }

  /**
   * Checks an interactive session (argv as `command`, repeated; `tty`; `cols`, `rows`) and who may
   * open it, before the WebSocket upgrade: 422, 404, 409 and 503 come as plain HTTP answers.
   */
  async planSession(principal: Principal, podId: string, q: ExecSessionQuery): Promise<ExecSessionPlan> {
    const command = typeof q.command === 'string' ? [q.command] : q.command;
    const argv = checkArgv({ command });
    const tty = flag(q.tty, 'tty');
    const cols = size(q.cols, 'cols', 80);
    const rows = size(q.rows, 'rows', 24);
    const { pod, host, runner } = await this.target(principal, podId);
    // refused before the upgrade while the account holds its share; taken when the session opens
    this.shares.check(pod.accountId, host.id);
    return {
      open: async (out) => {
        const release = this.shares.acquire(pod.accountId, host.id);
        try {
          const session = await openExecSession({ events: this.events, runner, idleTimeoutMs: this.idleTimeoutMs }, principal, pod, { host, podId: pod.id, argv, tty, cols, rows }, out);
          session.ended.then(release, release);
          return session;
        } catch (e) {
          release();
          throw e;
        }
      },
    };
  }

  /**
   * A single-use ticket for one session of this pod (exec-tickets.ts). The same refusals as the
   * session itself come here first, so a browser learns them from a plain HTTP answer.
   */
  async issueTicket(principal: Principal, podId: string): Promise<{ ticket: string; expiresAt: string }> {
    const { pod } = await this.target(principal, podId);
    return this.tickets.issue(principal, pod.id);
  }

  /** another account's pod 404, a pod not RUNNING 409, no runner or an unreachable host 503 */
  private async target(principal: Principal, podId: string): Promise<{ pod: PodRecord; host: HostRecord; runner: ContainerExecRunner }> {
    const pod = await this.store.get('pods', podId);
    if (!pod || pod.accountId !== principal.accountId || pod.endpointId !== undefined) throw new GpufleetError('NOT_FOUND', `Pod ${podId} was not found.`);
    if (pod.status !== 'RUNNING' || !pod.hostId)
      throw new GpufleetError('CONFLICT', `Pod ${pod.id} is ${pod.status}; commands run only in a RUNNING pod.`, { fields: { status: pod.status } });
    const host = await this.store.get('hosts', pod.hostId);
    if (!host || host.status === 'UNREACHABLE')
      throw new GpufleetError('UNAVAILABLE', `Host ${pod.hostId} of pod ${pod.id} cannot be reached now.`);
    const runner = this.runner;
    if (!runner) throw new GpufleetError('UNAVAILABLE', 'Commands are run by the provisioner, which does not run in this control plane process (GPUFLEET_PROVISIONER=off).');
    return { pod, host, runner };
  }
}

function checkArgv(body: unknown): string[] {
  const argv = check(validateExec, body, 'exec').command;
  if (argv[0] === '') throw new GpufleetError('VALIDATION_FAILED', 'The command needs a program.', { errors: ['$.command[0]: must not be empty'] });
  return argv;
}

function flag(v: unknown, name: string): boolean {
  if (v === undefined || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1' || v === '') return true;
  throw new GpufleetError('VALIDATION_FAILED', `${name} is true or false.`, { errors: [`$.${name}: must be true or false`] });
}

function size(v: unknown, name: string, dflt: number): number {
  if (v === undefined) return dflt;
  if (typeof v === 'string' && TERMINAL_SIZE.test(v) && Number(v) <= 1000) return Number(v);
  throw new GpufleetError('VALIDATION_FAILED', `${name} is a whole number from 1 to 1000.`, { errors: [`$.${name}: must be an integer from 1 to 1000`] });
}
