// `gpufleet endpoints create|list|get|update|delete|workers|logs`: serverless endpoints through the public
// /v2/serverless routes (docs/endpoints.md). `--data '{…}'` sends any other field of the body.
import { Command, Option } from 'commander';
import { ApiClient, EndpointsApi, type EndpointView } from '../client/index.ts';
import { logOptions, logQuery, printLog, type LogOptions } from './log-stream.ts';
import { intArg, jsonObjectArg, listArg, printJson, printRecord, printTable, withSpinner } from './output.ts';

interface BodyOptions {
  name?: string;
  template?: string;
  type?: string;
  gpu?: string[];
  gpuCount?: number;
  workersMin?: number;
  workersMax?: number;
  idleTimeout?: number;
  queueDelay?: number;
  requestCount?: number;
  data?: Record<string, unknown>;
  json?: boolean;
}

const api = () => new EndpointsApi(new ApiClient());

function body(o: BodyOptions): Record<string, unknown> {
  const workers = {
    ...(o.workersMin !== undefined ? { min: o.workersMin } : {}),
    ...(o.workersMax !== undefined ? { max: o.workersMax } : {}),
    ...(o.idleTimeout !== undefined ? { idleTimeout: o.idleTimeout } : {}),
  };
  const scaling =
    o.requestCount !== undefined ? { type: 'REQUEST_COUNT', requestCount: o.requestCount } : o.queueDelay !== undefined ? { type: 'QUEUE_DELAY', queueDelay: o.queueDelay } : undefined;
  return {
    ...o.data,
    ...(o.name ? { name: o.name } : {}),
    ...(o.template ? { templateId: o.template } : {}),
    ...(o.type ? { type: o.type } : {}),
    ...(o.gpu ? { gpu: { pools: o.gpu, ...(o.gpuCount ? { count: o.gpuCount } : {}) } } : {}),
    ...(Object.keys(workers).length ? { workers } : {}),
    ...(scaling ? { scaling } : {}),
  };
}

function bodyOptions(c: Command): Command {
  return c
    .option('--gpu <pools>', 'GPU pool or type ids in priority order (repeatable or comma separated)', listArg)
    .option('--gpu-count <n>', 'GPUs per worker', intArg)
    .option('--workers-min <n>', 'workers kept running', intArg)
    .option('--workers-max <n>', 'most workers at once', intArg)
    .option('--idle-timeout <s>', 'seconds a worker idles before it stops', intArg)
    .option('--queue-delay <s>', 'scale up when a job has waited this long (QUEUE_DELAY scaling)', intArg)
    .option('--request-count <n>', 'scale to one worker per n jobs (REQUEST_COUNT scaling)', intArg)
    .option('--data <json>', 'other fields of the body, as a JSON object', jsonObjectArg)
    .option('--json', 'print JSON');
}

const row = (e: EndpointView) => [e.id, e.name, e.type, e.templateId, `${e.workers?.min ?? 0}..${e.workers?.max ?? 0}`];

export function endpointsCommand(): Command {
  const endpoints = new Command('endpoints').description('your serverless endpoints');
  bodyOptions(
    endpoints
      .command('create')
      .description('create a serverless endpoint (QUEUE_DELAY scaling of 4 s unless told)')
      .requiredOption('--name <name>', 'endpoint name')
      .requiredOption('--template <id>', 'a serverless template id')
      .addOption(new Option('--type <type>', 'endpoint type').choices(['QUEUE', 'LOAD_BALANCER']).default('QUEUE')),
  ).action(async (o: BodyOptions) => {
    const b = body(o);
    const e = await withSpinner(`creating ${o.name ?? 'endpoint'}`, o.json, () => api().create({ scaling: { type: 'QUEUE_DELAY', queueDelay: 4 }, ...b }));
    if (o.json) printJson(e);
    else console.log(`endpoint ${e.id} (${e.name}) created`);
  });
  endpoints
    .command('list')
    .description('list your endpoints')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) => {
      const rows = await withSpinner('listing endpoints', o.json, () => api().list());
      if (o.json) return printJson(rows);
      printTable(['id', 'name', 'type', 'template', 'workers'], rows.map(row));
    });
  endpoints
    .command('get')
    .description('show an endpoint')
    .argument('<id>', 'endpoint id')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      const e = await api().get(id);
      if (o.json) printJson(e);
      else printRecord(e);
    });
  bodyOptions(
    endpoints
      .command('update')
      .description('change an endpoint (only the fields given)')
      .argument('<id>', 'endpoint id')
      .option('--name <name>', 'endpoint name')
      .option('--template <id>', 'a serverless template id'),
  ).action(async (id: string, o: BodyOptions) => {
    const e = await withSpinner(`updating ${id}`, o.json, () => api().update(id, body(o)));
    if (o.json) printJson(e);
    else console.log(`endpoint ${e.id} (${e.name}) updated`);
  });
  endpoints
    .command('delete')
    .description('delete an endpoint: its queued and running jobs are cancelled, its workers stopped')
    .argument('<id>', 'endpoint id')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      await withSpinner(`deleting ${id}`, o.json, () => api().delete(id));
      if (o.json) printJson({ id, deleted: true });
      else console.log(`${id} deleted`);
    });
  endpoints
    .command('workers')
    .description("list an endpoint's workers")
    .argument('<id>', 'endpoint id')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) => {
      const rows = await api().workers(id);
      if (o.json) return printJson(rows);
      printTable(['id', 'state'], rows.map((w) => [w.id, w.state ?? '']));
    });
  logOptions(
    endpoints.command('logs').description("print a worker's log (the last 100 lines); -f follows it").argument('<id>', 'endpoint id').argument('<worker>', 'worker id (gpufleet endpoints workers <id>)'),
  ).action(async (id: string, worker: string, o: LogOptions) => printLog((signal) => api().workerLogs(id, worker, logQuery(o), signal), o.json));
  return endpoints;
}
