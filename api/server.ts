// Builds the Fastify app: one origin serving REST v2, v1 endpoints, GraphQL and the docs.
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type preValidationHookHandler, type RawRequestDefaultExpression } from 'fastify';
import type { Logger } from 'pino';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { fromFastifyError, registerProblemHandlers, sendProblem } from './errors/problem.ts';
import type { ErrorObject } from 'ajv';
import { formatErrors, GpufleetError } from '../model/index.ts';
import { validatorCompiler } from './schemas/request-validators.ts';
import { serializerCompiler, type SerializerComparison } from './schemas/response-serializers.ts';
import { principalOf, registerRequestGuard } from './auth/request-guard.ts';
import { registerHeldRequests } from './auth/held-requests.ts';
import { routeHooks } from './auth/route-hooks.ts';
import { relayGate } from './auth/relayed-requests.ts';
import type { OriginMount } from './origin-mount.ts';
import { serverLogger } from './logging.ts';
import { requestLimiterFor } from './rate-limit/shared-limiter.ts';
import type { Services } from '../core/index.ts';
import { podRoutes } from './rest/pods.ts';
import { keyRoutes } from './rest/keys.ts';
import { catalogRoutes } from './rest/catalog.ts';
import { hostRoutes } from './rest/hosts.ts';
import { hostMetricsRoutes } from './rest/host-metrics.ts';
import { templateRoutes } from './rest/templates.ts';
import { networkVolumeRoutes } from './rest/network-volumes.ts';
import { registryRoutes } from './rest/registries.ts';
import { endpointRoutes } from './rest/endpoints.ts';
import { stackLockRoutes } from './rest/stack-locks.ts';
import { billingRoutes } from './rest/billing.ts';
import { graphqlPlugin } from './graphql/index.ts';
import { creditRoutes } from './rest/credits.ts';
import { accountLimitRoutes } from './rest/account-limits.ts';
import { jobInterface } from './jobs/index.ts';
import { jobHistoryRoutes, serverlessV2Routes, workerLogRoutes } from './serverless/index.ts';
import { registerHttpMetrics } from './observability/http-metrics.ts';
import { aboutRoute } from './about-route.ts';
import { aliveSchema, healthRoutes } from './observability/health-routes.ts';
import { podLogRoutes } from './rest/pod-logs.ts';
import { podExecRoutes } from './rest/pod-exec.ts';
import { podExecSocketRoutes } from './rest/pod-exec-socket.ts';
import { podPortRoutes } from './rest/pod-ports.ts';
import { accountSshKeyRoutes } from './rest/account-ssh-keys.ts';
import { eventRoutes } from './rest/events.ts';
import { publicEndpointRoutes, routeNames } from './rest/public-endpoints.ts';
import { mediaRoutes } from './rest/media.ts';
import { consoleSessionRoutes } from './console/session-routes.ts';
import { registerConsoleAudit } from './console/audit.ts';
import type { ConsoleCookieSettings } from './auth/console-cookie.ts';
import { consoleRoutes } from './console/console-files.ts';

export interface BuildOptions {
  services: Services;
  logger?: Logger | false;
  /** served on this origin ahead of the API's routes (the load-balancing gateway, docs/gateway.md) */
  mounts?: OriginMount[];
  /** false: answers through JSON.stringify instead of the response schemas' serializers; a comparison: both, compared (tests) */
  serializers?: boolean | SerializerComparison;
  /** false: route schemas validate nothing, the services alone refuse (the validators' comparison test) */
  validators?: boolean;
}

/** Registered routes as [regex, method], so the not-found handler can tell 404 from 405. */
function routeTable(app: FastifyInstance): (path: string) => string[] {
  const routes: { re: RegExp; method: string }[] = [];
  app.addHook('onRoute', (r) => {
    if (r.method === 'HEAD' || (Array.isArray(r.method) && r.method.length > 1)) return;
    const re = new RegExp('^' + r.url.replace(/\/:[^/]+/g, '/[^/]+').replace(/\*/g, '.*') + '/?$');
    routes.push({ re, method: String(r.method) });
  });
  return (path) => [...new Set(routes.filter((r) => r.re.test(path)).map((r) => r.method))];
}

function mountRewrite(mounts: OriginMount[]): (req: RawRequestDefaultExpression) => string {
  return (req) => {
    const url = req.url ?? '/';
    for (const m of mounts) {
      const to = m.rewriteUrl(url, req.headers.host);
      if (to !== undefined) return to;
    }
    return url;
  };
}

/** A body schema that an empty object satisfies (no required field): there, no body means `{}`. */
function fieldsAllOptional(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const s = schema as { type?: unknown; required?: unknown; minProperties?: unknown };
  return s.type === 'object' && !(Array.isArray(s.required) && s.required.length > 0) && !(typeof s.minProperties === 'number' && s.minProperties > 0);
}

export async function buildServer(opts: BuildOptions): Promise<FastifyInstance> {
  const { services } = opts;
  const app = Fastify({
    // whatever logger is given, the server's lines go through the API-key redaction (api/logging.ts)
    ...(opts.logger ? { loggerInstance: serverLogger(opts.logger) as FastifyBaseLogger } : { logger: false }),
    bodyLimit: 1024 * 1024,
    // a mount may claim a request before routing (a load-balancing endpoint's id, docs/gateway.md)
    ...(opts.mounts?.length ? { rewriteUrl: mountRewrite(opts.mounts) } : {}),
    routerOptions: { ignoreTrailingSlash: true },
    forceCloseConnections: true,
    ajv: { customOptions: { strict: false } },
    // URLs the router cannot read (bad percent-encoding, an over-long id) are problem+json too
    frameworkErrors: (err, _request, reply) => {
      void sendProblem(
        reply,
        err.code === 'FST_ERR_BAD_URL'
          ? new GpufleetError('BAD_REQUEST', `The request URL cannot be read: ${err.message}`)
          : err.code === 'FST_ERR_MAX_PARAM_LENGTH'
            ? new GpufleetError('ROUTE_NOT_FOUND', 'No resource has an id that long.')
            : fromFastifyError(err),
      );
    },
  });
  // Route schemas run: a body is checked by its service's own check before the handler (the same
  // answer as the service's, api/schemas/request-validators.ts), query strings and path parameters
  // are coerced to their declared types, and answers are written by fast-json-stringify from the
  // response schemas (api/schemas/response-serializers.ts). GraphQL's route declares no schema.
  app.setValidatorCompiler(opts.validators === false ? () => () => true : validatorCompiler);
  app.setSerializerCompiler(serializerCompiler(opts.serializers ?? true));
  // a validator result that is not already a registry error (none today) is still problem+json
  app.setSchemaErrorFormatter((errors, part) => {
    const lines = formatErrors(errors as unknown as ErrorObject[]);
    return new GpufleetError('VALIDATION_FAILED', `Invalid ${part}: ${lines.join('; ')}`, { errors: lines });
  });
  // bodies are JSON only: without this, Fastify's built-in text/plain parser hands a string to the
  // services (a 422) where the contract wants 415
  app.removeContentTypeParser('text/plain');
  // An empty body sent as application/json is no body (runpod-python's cancel and purge-queue send
  // exactly that): routes that take none, or only optional fields, answer as if none was sent.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body.length === 0) return done(null, undefined);
    parseJson(request, body.toString(), done);
  });
  // (a hook of the routes whose body schema it concerns only: every other request skips it)
  const emptyBodyIsObject: preValidationHookHandler = (request, _reply, done) => {
    if (request.body === undefined) request.body = {};
    done();
  };
  app.addHook('onRoute', (route) => {
    if (fieldsAllOptional(route.schema?.body)) route.preValidation = [emptyBodyIsObject, ...routeHooks(route.preValidation)];
  });

  const allowed = routeTable(app);
  // public model slugs may not take a route name: the catalog reads them from this table
  services.publicEndpoints.useReservedNames(routeNames(app));
  registerProblemHandlers(app, allowed);
  registerHttpMetrics(app, services.telemetry); // before the guard: refused requests are counted too
  relayGate(app); // through a worker relay only the worker protocol answers: before the guard and everything else
  const consoleCookie: ConsoleCookieSettings = { publicUrl: services.config.publicUrl, allowHttp: services.config.consoleAllowHttp === true };
  registerRequestGuard(app, services.keys, requestLimiterFor(services, opts.logger || undefined), services.workerPorts, services.config.metricsToken, {
    sessions: services.consoleSessions,
    settings: consoleCookie,
  });
  registerConsoleAudit(app, services.events); // every mutating request a console session made (docs/console.md)
  registerHeldRequests(app, services.heldRequests); // after the guard: it counts per account

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'gpufleet v2', version: '2.0.0', description: 'Pods, templates, network volumes, registries and catalogs on your own GPU fleet.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    hideUntagged: true,
  });
  // the docs are public: every route the UI plugin registers is marked so here, in its own context
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, public: true };
    });
    await docs.register(swaggerUi, { routePrefix: '/v2/docs' });
    docs.get('/v2/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  });
  app.get('/healthz', { config: { public: true }, schema: { hide: true, response: { 200: aliveSchema } } }, async () => ({ ok: true }));
  aboutRoute(app); // GET /, public: the version and where the docs are
  consoleRoutes(app, services.config.consoleDir); // GET /console: the web console's files (docs/console.md)
  healthRoutes(app, services); // /metrics, /readyz

  podRoutes(app, services.pods, services.portAccess.proxy);
  podPortRoutes(app, services.portAccess);
  accountSshKeyRoutes(app, services.sshKeys);
  podLogRoutes(app, services.podLogs);
  podExecRoutes(app, services.podExec);
  await podExecSocketRoutes(app, services.podExec);
  eventRoutes(app, services.events);
  keyRoutes(app, services.keys, services.store);
  catalogRoutes(app, services);
  hostRoutes(app, services);
  hostMetricsRoutes(app, services);
  templateRoutes(app, services.templates);
  networkVolumeRoutes(app, services.networkVolumes);
  registryRoutes(app, services.registries);
  endpointRoutes(app, services.endpoints, services.templates, services.workers, services.config.lbDomain);
  stackLockRoutes(app, services.stackLocks);
  billingRoutes(app, services.billing);
  creditRoutes(app, services.credits);
  accountLimitRoutes(app, services.limits);
  publicEndpointRoutes(app, services.publicEndpoints);
  mediaRoutes(app, services.media);
  serverlessV2Routes(app, services.endpoints, services.workers, services.endpointHistory, services.config.lbDomain);
  workerLogRoutes(app, services.podLogs);
  jobHistoryRoutes(app, services.jobs);
  await jobInterface(app, services);
  await app.register(graphqlPlugin, { services });
  consoleSessionRoutes(app, { sessions: services.consoleSessions, settings: consoleCookie, store: services.store, events: services.events });
  // worker and pod content (load-balancing endpoints, pod ports): the console's cookie is never read
  // there (and the proxies strip every gpufleet cookie before forwarding); they take a key only
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, consoleSession: false };
  });
  for (const m of opts.mounts ?? []) await m.register(app, { principalOf });
  return app;
}
