// v2 pods: create, list, get, update, delete and actions (spec 2.1, 3, 4.1).
import type { FastifyInstance } from 'fastify';
import { POD_STATUSES, toPodView, type PodRecord, type PortProxy } from '../../model/index.ts';
import { podActionSchema, podCreateSchema, podUpdateSchema } from '../../model/index.ts';
import { podViewSchema } from '../../model/index.ts';
import { GpufleetError } from '../../model/index.ts';
import { principalOf } from '../auth/request-guard.ts';
import type { PodListFilter, PodService } from '../../core/index.ts';
import { docSchema, errorResponses, idParams, queryByHand, type RestTypeProvider } from './route-schema.ts';

const tags = ['pods'];
const listFields = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: [...POD_STATUSES] },
    name: { type: 'string' },
    image: { type: 'string' },
    gpuTypeId: { type: 'string' },
    dataCenterId: { type: 'string' },
    templateId: { type: 'string' },
    tag: { type: 'string', description: 'key=value; repeat to require several' },
    includeTerminated: { type: 'boolean' },
  },
} as const;
/** parsePodListQuery is the check (its messages are the answers) */
const listQuery = queryByHand(listFields);

/** read by the handler as sent: any non-empty dryRun is a dry run (as before the schemas ran) */
const createQuery = queryByHand({
  type: 'object',
  additionalProperties: false,
  properties: {
    dryRun: { type: 'boolean', description: 'answer 200 with where the pod would go (or the refusal a create would get) and create nothing' },
    replaces: { type: 'string', minLength: 1, maxLength: 64, description: "with dryRun: a pod of yours whose compute and name count as free (a stack's replacement of it)" },
  },
});

const dryRunSchema = {
  type: 'object',
  description: 'where the pod would go: the host (machineId) and what it would cost',
  properties: {
    dryRun: { type: 'boolean', enum: [true] },
    machineId: { type: 'string' },
    dataCenterId: { type: 'string' },
    cloud: { type: 'string' },
    gpu: { type: ['object', 'null'], properties: { id: { type: 'string' }, count: { type: 'integer' } } },
    costPerHr: { type: 'number' },
    cudaVersion: { type: ['string', 'null'] },
    replaces: { type: ['string', 'null'] },
    wouldPreempt: { type: 'integer', description: 'interruptible pods the create would preempt (the dry run preempts none)' },
  },
} as const;

export function parsePodListQuery(q: Record<string, unknown>): PodListFilter {
  const f: PodListFilter = {};
  const errors: string[] = [];
  const str = (k: string): string | undefined => {
    const v = q[k];
    if (v === undefined) return undefined;
    if (typeof v === 'string') return v;
    errors.push(`$.${k}: must be given once`);
    return undefined;
  };
  const status = str('status');
  if (status !== undefined) {
    const known = POD_STATUSES.find((st) => st === status);
    if (known) f.status = known;
    else errors.push(`$.status: must be one of ${POD_STATUSES.join(', ')}`);
  }
  for (const k of ['name', 'image', 'gpuTypeId', 'dataCenterId', 'templateId'] as const) {
    const v = str(k);
    if (v !== undefined) f[k] = v;
  }
  const inc = str('includeTerminated');
  if (inc !== undefined) {
    if (inc === 'true' || inc === 'false') f.includeTerminated = inc === 'true';
    else errors.push('$.includeTerminated: must be true or false');
  }
  const tagsIn = q.tag === undefined ? [] : Array.isArray(q.tag) ? q.tag : [q.tag];
  for (const t of tagsIn) {
    const m = typeof t === 'string' ? /^([^=]+)=(.*)$/.exec(t) : null;
    if (!m) errors.push('$.tag: must be key=value');
    else (f.tag ??= {})[m[1]!] = m[2]!;
  }
  // own properties only: `constructor` or `__proto__` is as unknown as any other name
  for (const k of Object.keys(q)) if (!Object.hasOwn(listFields.properties, k)) errors.push(`$.${k}: unknown query parameter`);
  if (errors.length) throw new GpufleetError('VALIDATION_FAILED', `Invalid query: ${errors.join('; ')}`, { errors });
  return f;
}

/** `proxy`: where pods' HTTP ports have URLs (GPUFLEET_PROXY_DOMAIN, docs/connect.md); null: nowhere */
export function podRoutes(fastify: FastifyInstance, pods: PodService, proxy: PortProxy | null = null): void {
  const app = fastify.withTypeProvider<RestTypeProvider>();
  /** one pod (create, get, update, action): its view with its last few events (docs/events.md); lists carry none */
  const domain = pods.network.settings.internalDomain;
  const onePod = (pod: PodRecord) => ({ ...toPodView(pod, Date.now(), proxy, domain), events: pods.recentEvents(pod.id) });
  app.post(
    '/v2/pods',
    {
      config: { scope: 'read_write' },
      schema: {
        tags,
        summary: 'Create a pod',
        body: docSchema(podCreateSchema),
        headers: { type: 'object', properties: { 'idempotency-key': { type: 'string' } } },
        querystring: createQuery,
        response: { 200: dryRunSchema, 201: podViewSchema, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request, reply) => {
      const { dryRun } = request.query;
      // a repeated replaces is looked up as its text, as before (and found nowhere: 404)
      const replaces = request.query.replaces === undefined ? undefined : String(request.query.replaces);
      if (replaces !== undefined && !dryRun) throw new GpufleetError('VALIDATION_FAILED', 'replaces is a dry run\'s parameter: use it with dryRun=true.', { errors: ['$.replaces: only with dryRun=true'] });
      // every check a create makes, placement included; nothing is written (docs/pods.md#dry-run)
      if (dryRun) return reply.code(200).send(await pods.dryRun(principalOf(request), request.body, replaces));
      const key = request.headers['idempotency-key'];
      if (Array.isArray(key) || (typeof key === 'string' && (key.length === 0 || key.length > 255)))
        throw new GpufleetError('BAD_REQUEST', 'Idempotency-Key must be one value of 1 to 255 characters.');
      const { pod, replayed } = await pods.create(principalOf(request), request.body, key);
      if (replayed) reply.header('idempotent-replayed', 'true');
      return reply.code(201).send(onePod(pod));
    },
  );

  app.get(
    '/v2/pods',
    {
      config: { scope: 'read' },
      schema: {
        tags,
        summary: 'List pods',
        querystring: listQuery,
        response: { 200: { type: 'object', properties: { pods: { type: 'array', items: podViewSchema } } }, ...errorResponses(401, 422, 429) },
      },
    },
    async (request) => {
      const filter = parsePodListQuery(request.query);
      const list = await pods.list(principalOf(request), filter);
      const now = Date.now();
      return { pods: list.map((p) => toPodView(p, now, proxy, domain)) };
    },
  );

  app.get(
    '/v2/pods/:id',
    {
      config: { scope: 'read' },
      schema: { tags, summary: 'Get a pod', params: idParams, response: { 200: podViewSchema, ...errorResponses(401, 403, 404, 429) } },
    },
    async (request) => {
      const pod = await pods.get(principalOf(request), request.params.id);
      return onePod(pod);
    },
  );

  app.patch(
    '/v2/pods/:id',
    {
      config: { scope: 'read_write' },
      schema: {
        tags,
        summary: 'Update a pod',
        params: idParams,
        body: docSchema(podUpdateSchema),
        response: { 200: podViewSchema, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request) => onePod(await pods.update(principalOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/v2/pods/:id',
    {
      config: { scope: 'read_write' },
      schema: { tags, summary: 'Delete (terminate) a pod', params: idParams, response: { 204: { type: 'null' }, ...errorResponses(401, 403, 404, 429) } },
    },
    async (request, reply) => {
      await pods.delete(principalOf(request), request.params.id);
      return reply.code(204).send();
    },
  );

  app.post(
    '/v2/pods/:id/action',
    {
      config: { scope: 'read_write' },
      schema: {
        tags,
        summary: 'Start, stop, restart or terminate a pod',
        params: idParams,
        body: docSchema(podActionSchema),
        response: { 200: podViewSchema, 204: { type: 'null' }, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request, reply) => {
      const pod = await pods.act(principalOf(request), request.params.id, request.body);
      if (pod.status === 'TERMINATED') return reply.code(204).send();
      return onePod(pod);
    },
  );
}
