// `gpufleet pods list|get|create|update|delete|start|stop|restart|terminate|logs|exec|ssh` for users (a
// read_write key of their account): the public /v2/pods routes through client/. `--data '{…}'`
// sends any other field of the create body (model/schemas/pod.ts); the named options win over it.
import { Command } from 'commander';
import { ApiClient, CatalogApi, PodsApi, type PodAction, type PodView } from '../client/index.ts';
import { containerBody, containerOptions, type ContainerOptions } from './container-options.ts';
import { logOptions, logQuery, printLog, type LogOptions } from './log-stream.ts';
import { intArg, jsonObjectArg, listArg, printJson, withSpinner } from './output.ts';
import { execSession } from './pod-exec.ts';
import { podSshCommand } from './pod-ssh.ts';
import { defined, resourceCommand } from './resource-command.ts';

interface CreateOptions extends ContainerOptions {
  name?: string;
  template?: string;
  gpu?: string;
  gpuCount?: number;
  cpu?: string;
  vcpu?: number;
  memory?: number;
  cloud?: string;
  datacenter?: string[];
  volume?: string;
  volumePath?: string;
  wait?: boolean;
  waitTimeout?: number;
  json?: boolean;
}

const api = () => new PodsApi(new ApiClient());

const gpuOf = (p: PodView) => (p.gpu ? `${p.gpu.count} × ${p.gpu.id}` : p.cpu ? 'cpu' : '');

interface Cpu {
  id: string;
  vcpuCount: number;
  memory: number;
}
interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface PodEvent {
  time: string;
  status: string | null;
  type: string;
  reason: string | null;
}

/** `pods get` for people: what a 100-column terminal shows well; every field with --json */
export function podFields(p: PodView): [string, unknown][] {
  const cpu = p.cpu as Cpu | null | undefined;
  const env = Object.keys((p.env as Record<string, string> | undefined) ?? {});
  const conditions = (p.conditions as Condition[] | undefined) ?? [];
  const events = (p.events as PodEvent[] | undefined) ?? [];
  const ssh = p.ssh as { direct?: string | null; proxy?: string | null } | undefined;
  const network = (p.mounts as { network?: { volumeId: string; path: string }[] } | undefined)?.network ?? [];
  const undefIfEmpty = (v: unknown) => (v === null || v === '' || (Array.isArray(v) && v.length === 0) ? undefined : v);
  return [
    ['id', p.id],
    ['name', p.name],
    ['status', p.desiredStatus && p.desiredStatus !== p.status ? `${p.status} (desired ${String(p.desiredStatus)})` : p.status],
    ['reason', undefIfEmpty(p.statusReason)],
    ['image', p.image],
    ['args', undefIfEmpty(p.args)],
    ['gpu', p.gpu ? `${p.gpu.count} × ${p.gpu.id}` : undefined],
    ['cpu', cpu ? `${cpu.vcpuCount} vCPU, ${cpu.memory} GB (${cpu.id})` : undefined],
    ['disk', typeof p.disk === 'number' ? `${p.disk} GB` : undefined],
    ['volume', network.length ? network.map((m) => `${m.volumeId} at ${m.path}`) : undefined],
    ['ports', undefIfEmpty(p.ports)],
    ['env', env.length ? `${env.join(', ')} (values: --json)` : undefined],
    ['where', [p.cloud, p.dataCenterId, p.machineId ? `host ${String(p.machineId)}` : null].filter(Boolean).join(', ') || undefined],
    ['cost', typeof p.cost === 'number' ? `$${p.cost}/h` : undefined],
    ['created', p.createdAt],
    ['started', undefIfEmpty(p.startedAt)],
    ['ssh', undefIfEmpty(ssh?.direct ?? ssh?.proxy ?? null)],
    ['actions', undefIfEmpty(p.actions)],
    ['conditions', conditions.length ? conditions.map((c) => `${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${c.message}` : ''}`).join('\n') : undefined],
    ['events', events.length ? events.slice(-5).map((e) => `${e.time} ${e.status ?? e.type}${e.reason ? `: ${e.reason}` : ''}`).join('\n') : undefined],
  ];
}

/** `--cpu <flavor> --vcpu n [--memory gb]`: the memory defaults to the flavor's GB per vCPU (GET /v2/catalog/cpus) */
async function cpuConfig(o: CreateOptions): Promise<Cpu | undefined> {
  if (!o.cpu) return undefined;
  const vcpuCount = o.vcpu ?? 2;
  if (o.memory !== undefined) return { id: o.cpu, vcpuCount, memory: o.memory };
  const flavor = (await new CatalogApi(new ApiClient()).cpus()).find((c) => c.id === o.cpu);
  // an unknown flavor: the server says so, with the list of flavors
  const perVcpu = typeof flavor?.memoryPerVcpuGb === 'number' ? flavor.memoryPerVcpuGb : 1;
  return { id: o.cpu, vcpuCount, memory: vcpuCount * perVcpu };
}

async function createBody(o: CreateOptions): Promise<Record<string, unknown>> {
  return defined({
    name: o.name,
    ...containerBody(o),
    templateId: o.template,
    gpu: o.gpu ? { id: o.gpu, ...(o.gpuCount ? { count: o.gpuCount } : {}) } : undefined,
    cpu: await cpuConfig(o),
    cloud: o.cloud,
    dataCenterIds: o.datacenter,
    mounts: o.volume ? { network: [{ volumeId: o.volume, path: o.volumePath ?? '/workspace' }] } : undefined,
  });
}

/** statuses a pod does not leave by itself: waiting longer cannot help */
const SETTLED = new Set(['EXITED', 'TERMINATED']);

/** polls until the pod is RUNNING; exit 1 with its status and reason when it settles elsewhere or the time is up */
async function waitRunning(pod: PodView, timeoutS: number, json: boolean | undefined): Promise<PodView> {
  const deadline = Date.now() + timeoutS * 1000;
  let p = pod;
  await withSpinner(`waiting for ${pod.id} to be RUNNING`, json, async () => {
    while (p.status !== 'RUNNING' && !SETTLED.has(p.status) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1000));
      p = await api().get(pod.id);
    }
  });
  if (p.status !== 'RUNNING') {
    process.stderr.write(`error: pod ${p.id} is ${p.status}, not RUNNING${p.statusReason ? `: ${String(p.statusReason)}` : ''}\n`);
    process.exitCode = 1;
  }
  return p;
}

function actionCommand(action: PodAction, description: string): Command {
  return new Command(action)
    .description(description)
    .argument('<id>', 'pod id')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      const pod = await withSpinner(`${action} ${id}`, o.json, () => api().act(id, action));
      const view = pod ?? { id, status: 'TERMINATED' };
      if (o.json) printJson(view);
      else console.log(`${view.id} ${view.status}`);
    });
}

export function podsCommand(): Command {
  const pods = resourceCommand<PodView>({
    name: 'pods',
    noun: 'pod',
    description: 'your pods',
    api: (c) => new PodsApi(c) as never,
    columns: [
      ['id', (p) => p.id],
      ['name', (p) => p.name],
      ['status', (p) => p.status],
      ['image', (p) => p.image],
      ['gpu', gpuOf],
      ['dc', (p) => p.dataCenterId],
    ],
    show: podFields,
    update: { options: containerOptions, body: (o) => containerBody(o as ContainerOptions) },
    deletes: 'terminated, its container and container disk gone (network volumes stay)',
  });
  containerOptions(
    pods
      .command('create')
      .description('create a pod; --wait waits until it is RUNNING')
      .requiredOption('--name <name>', 'pod name')
      .option('--template <id>', 'template id (its fields are the defaults of the options)'),
  )
    .option('--gpu <type>', 'GPU type id (gpufleet gpus list)')
    .option('--gpu-count <n>', 'GPUs of that type', intArg)
    .option('--cpu <flavor>', 'a CPU pod of this flavor instead (gpufleet cpus list)')
    .option('--vcpu <n>', 'vCPUs of a CPU pod (default 2)', intArg)
    .option('--memory <gb>', "memory of a CPU pod, GB (default: the flavor's GB per vCPU × vCPUs)", intArg)
    .option('--cloud <tier>', 'SECURE | COMMUNITY')
    .option('--datacenter <ids>', 'data center ids (repeatable or comma separated)', listArg)
    .option('--volume <id>', 'a network volume to mount')
    .option('--volume-path <path>', 'where the network volume is mounted (default /workspace)')
    .option('--wait', 'wait until the pod is RUNNING (exit 1 if it settles elsewhere or --wait-timeout passes)')
    .option('--wait-timeout <s>', 'seconds --wait waits at most (default 600)', intArg)
    .option('--data <json>', 'other fields of the create body, as a JSON object', jsonObjectArg)
    .option('--json', 'print JSON')
    .action(async (o: CreateOptions & { data?: Record<string, unknown> }) => {
      const body = { ...o.data, ...(await createBody(o)) };
      let pod = await withSpinner(`creating ${o.name ?? 'pod'}`, o.json, () => api().create(body));
      if (o.wait) pod = await waitRunning(pod, o.waitTimeout ?? 600, o.json);
      if (o.json) printJson(pod);
      else console.log(`pod ${pod.id} (${pod.name}) ${pod.status}`);
    });
  pods.addCommand(actionCommand('start', 'start a stopped pod'));
  pods.addCommand(actionCommand('stop', 'stop a pod (its container volume stays)'));
  pods.addCommand(actionCommand('restart', 'restart a pod'));
  pods.addCommand(actionCommand('terminate', 'terminate a pod (gone for good)'));
  logOptions(pods.command('logs').description("print a pod's log (the last 100 lines); -f follows it").argument('<id>', 'pod id')).action(
    async (id: string, o: LogOptions) => printLog((signal) => api().logs(id, logQuery(o), signal), o.json),
  );
  pods
    .command('exec')
    .description(
      "run a command in a pod's container: gpufleet pods exec <id> -- <argv…>; on a terminal interactively (gpufleet pods exec <id> -- sh), " +
        'otherwise with stdin piped to it; exits with its exit code',
    )
    .argument('<id>', 'pod id')
    .argument('<argv...>', 'the program and its arguments (put -- before them)')
    .action(async (id: string, argv: string[]) => {
      process.exitCode = await execSession(id, argv);
    });
  pods.addCommand(podSshCommand(execSession));
  return pods;
}
