// POST /v2/pods/{id}/exec: one command run in a pod's container on its host (docs/pods.md, "Exec").
// The provisioner runs it over SSH (ContainerExecRunner); this decides who may and when: another
// account's pod is 404, a pod that is not RUNNING 409, no runner or an unreachable host 503, all
// before any output. Every exec is an event of the pod (`pod.exec`, the argv in the reason).
import { check, compile, GpufleetError, podExecSchema, userActor, type HostRecord, type PodExecInput } from '../../model/index.ts';
import type { StoreReader } from '../../store/index.ts';
import type { Principal } from '../api-keys.ts';
import type { EventService } from '../events/event-service.ts';

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

/** The port the provisioner implements: run a command in a pod's container. */
export interface ContainerExecRunner {
  exec(req: ContainerExecRequest): Promise<ContainerExec>;
}

const validateExec = compile<PodExecInput>(podExecSchema);

/** the argv as one readable string for the event (each word JSON-quoted, so nothing is ambiguous) */
const argvText = (argv: readonly string[]) => argv.map((a) => JSON.stringify(a)).join(' ').slice(0, 512);

export class PodExecService {
  private runner: ContainerExecRunner | null = null;

  constructor(
    private readonly store: StoreReader,
    private readonly events: EventService,
  ) {}

  /** Called by the provisioner, which reaches the hosts, when it starts in this process. */
  useRunner(runner: ContainerExecRunner | null): void {
    this.runner = runner;
  }

  /** `body` is the request's, unchecked: `{command: [argv…]}` (model/schemas/pod-exec.ts) */
  async exec(principal: Principal, podId: string, body: unknown): Promise<ContainerExec> {
    const argv = check(validateExec, body, 'exec').command;
    if (argv[0] === '') throw new GpufleetError('VALIDATION_FAILED', 'The command needs a program.', { errors: ['$.command[0]: must not be empty'] });
    const pod = await this.store.get('pods', podId);
    if (!pod || pod.accountId !== principal.accountId || pod.endpointId !== undefined) throw new GpufleetError('NOT_FOUND', `Pod ${podId} was not found.`);
    if (pod.status !== 'RUNNING' || !pod.hostId)
      throw new GpufleetError('CONFLICT', `Pod ${pod.id} is ${pod.status}; commands run only in a RUNNING pod.`, { fields: { status: pod.status } });
    const host = await this.store.get('hosts', pod.hostId);
    if (!host || host.status === 'UNREACHABLE')
      throw new GpufleetError('UNAVAILABLE', `Host ${pod.hostId} of pod ${pod.id} cannot be reached now.`);
    const runner = this.runner;
    if (!runner) throw new GpufleetError('UNAVAILABLE', 'Commands are run by the provisioner, which does not run in this control plane process (GPUFLEET_PROVISIONER=off).');
    this.events.log.append({
      resourceType: 'pod',
      resourceId: pod.id,
      accountId: pod.accountId,
      type: 'pod.exec',
      status: pod.status,
      previousStatus: pod.status,
      reason: `exec ${argvText(argv)}`,
      actor: userActor(principal.keyId),
    });
    return runner.exec({ host, podId: pod.id, argv });
  }
}
