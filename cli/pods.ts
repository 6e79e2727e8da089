// `gpufleet pods create|list|get|start|stop|restart|terminate|logs|exec|ssh` for users (a read_write key of
// their account): the public /v2/pods routes through client/. `--data '{…}'` sends any other field
// of the create body (model/schemas/pod.ts); the named options win over it.
import { Command, Option } from 'commander';
import { ApiClient, ApiError, PodsApi, type PodAction, type PodView } from '../client/index.ts';
import { podSshCommand } from './pod-ssh.ts';
import { intArg, jsonObjectArg, keyValueArg, listArg, printJson, printRecord, printTable, withSpinner } from './output.ts';

interface CreateOptions {
  name: string;
  image?: string;
  template?: string;
  gpu?: string;
  gpuCount?: number;
  cloud?: string;
  datacenter?: string[];
  env?: Record<string, string>;
  port?: string[];
  data?: Record<string, unknown>;
  json?: boolean;
}

const api = () => new PodsApi(new ApiClient());

function createBody(o: CreateOptions): Record<string, unknown> {
  return {
    ...o.data,
    name: o.name,
    ...(o.image ? { image: o.image } : {}),
    ...(o.template ? { templateId: o.template } : {}),
    ...(o.gpu ? { gpu: { id: o.gpu, ...(o.gpuCount ? { count: o.gpuCount } : {}) } } : {}),
    ...(o.cloud ? { cloud: o.cloud } : {}),
    ...(o.datacenter ? { dataCenterIds: o.datacenter } : {}),
    ...(o.env ? { env: o.env } : {}),
    ...(o.port ? { ports: o.port } : {}),
  };
}

const gpuOf = (p: PodView) => (p.gpu ? `${p.gpu.count} × ${p.gpu.id}` : 'cpu');

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
  const pods = new Command('pods').description('your pods');
  pods
    .command('create')
    .description('create a pod')
    .requiredOption('--name <name>', 'pod name')
    .option('--image <image>', 'container image')
    .option('--template <id>', 'template id')
    .option('--gpu <type>', 'GPU type id (gpufleet catalog: GET /v2/catalog/gpus)')
    .option('--gpu-count <n>', 'GPUs of that type', intArg)
    .option('--cloud <tier>', 'SECURE | COMMUNITY')
    .option('--datacenter <ids>', 'data center ids (repeatable or comma separated)', listArg)
    .option('--env <KEY=VALUE>', 'environment variable (repeatable)', keyValueArg)
    .option('--port <port>', 'exposed port, e.g. 8888/http (repeatable or comma separated)', listArg)
    .option('--data <json>', 'other fields of the create body, as a JSON object', jsonObjectArg)
    .option('--json', 'print JSON')
    .action(async (o: CreateOptions) => {
      const pod = await withSpinner(`creating ${o.name}`, o.json, () => api().create(createBody(o)));
      if (o.json) printJson(pod);
      else console.log(`pod ${pod.id} (${pod.name}) ${pod.status}`);
    });
  pods
    .command('list')
    .description('list your pods')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const rows = await withSpinner('listing pods', o.json, () => api().list());
      if (o.json) return printJson(rows);
      printTable(['id', 'name', 'status', 'image', 'gpu', 'dc'], rows.map((p) => [p.id, p.name, p.status, p.image ?? '', gpuOf(p), p.dataCenterId ?? '']));
    });
  pods
    .command('get')
    .description('show a pod')
    .argument('<id>', 'pod id')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      const pod = await api().get(id);
      if (o.json) printJson(pod);
      else printRecord(pod);
    });
  pods.addCommand(actionCommand('start', 'start a stopped pod'));
  pods.addCommand(actionCommand('stop', 'stop a pod (its container volume stays)'));
  pods.addCommand(actionCommand('restart', 'restart a pod'));
  pods.addCommand(actionCommand('terminate', 'terminate a pod (gone for good)'));
  pods
    .command('logs')
    .description("follow a pod's log (Ctrl-C ends)")
    .argument('<id>', 'pod id')
    .option('--tail <n>', 'lines before the live ones (default 100, at most 5000)', intArg)
    .addOption(new Option('--source <source>', 'container output or the pod\'s system events').choices(['container', 'system']))
    .option('--json', 'print each event as one JSON line')
    .action(async (id: string, o: { tail?: number; source?: string; json?: boolean }) => {
      const abort = new AbortController();
      const onSigint = () => abort.abort();
      process.once('SIGINT', onSigint);
      try {
        for await (const e of api().logs(id, { ...(o.tail !== undefined ? { tail: o.tail } : {}), ...(o.source ? { source: o.source } : {}) }, abort.signal)) {
          const data = JSON.parse(e.data) as { line?: string; source?: string; reason?: string; code?: string; detail?: string; status?: number; errors?: string[] };
          if (e.event === 'problem') {
            throw new ApiError(data.status ?? 500, data.code ?? 'INTERNAL', data.detail ?? 'the log stream failed', data.errors ?? []);
          }
          if (o.json) console.log(JSON.stringify(e.event === 'message' ? data : { event: e.event, ...data }));
          else if (e.event === 'message') console.log(data.source === 'system' ? `[system] ${data.line ?? ''}` : (data.line ?? ''));
        }
      } finally {
        process.off('SIGINT', onSigint);
      }
    });
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

/**
 * One interactive session (GET /v2/pods/{id}/exec/ws, docs/pods.md "Interactive exec"). With stdin
 * and stdout on a terminal: a terminal in the pod too, this one in raw mode (Ctrl-C and Ctrl-D go
 * to the command), resized with it (SIGWINCH). Otherwise stdin is piped to the command until EOF,
 * stdout and stderr come apart, and Ctrl-C leaves (130). Answers the exit code to exit with.
 */
async function execSession(id: string, argv: string[]): Promise<number> {
  const stdin = process.stdin;
  const tty = stdin.isTTY === true && process.stdout.isTTY === true;
  const size = () => ({ cols: process.stdout.columns || 80, rows: process.stdout.rows || 24 });
  const session = await api().execSession(id, argv, tty ? { tty: true, ...size() } : {}, {
    stdout: (d) => process.stdout.write(d),
    stderr: (d) => process.stderr.write(d),
  });
  let interrupted = false;
  const onData = (d: Buffer) => session.write(d);
  const onEnd = () => session.endInput();
  const onResize = () => {
    const { cols, rows } = size();
    session.resize(cols, rows);
  };
  const onSigint = () => {
    interrupted = true;
    session.close();
  };
  if (tty) {
    stdin.setRawMode(true);
    process.on('SIGWINCH', onResize);
  } else process.on('SIGINT', onSigint);
  stdin.on('data', onData);
  stdin.on('end', onEnd);
  stdin.resume();
  try {
    const end = await session.ended;
    if (end.code !== null) return end.code;
    if (interrupted) return 130;
    process.stderr.write(`error: the session ended before the command did (${end.reason})\n`);
    return 1;
  } finally {
    if (tty) stdin.setRawMode(false);
    process.off('SIGWINCH', onResize);
    process.off('SIGINT', onSigint);
    stdin.off('data', onData);
    stdin.off('end', onEnd);
    stdin.pause();
    // a terminal's or a pipe's read keeps the process alive otherwise
    stdin.destroy();
  }
}
