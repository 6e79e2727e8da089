// Pods' HTTP ports on the proxy domain (docs/connect.md), and the SSH tunnel (pod-ssh-tunnel.ts): a request to host
// `<pod id>-<port>.<GPUFLEET_PROXY_DOMAIN>` goes to that port of the pod's container, over its host's
// SSH connection (a direct-tcpip channel to the container's address, as load-balancing workers are
// reached: connectors.ts), with bodies streaming both ways and WebSocket upgrades joined (tunnel.ts).
// The Host header picks it before routing, and every name under the proxy domain is the proxy's:
// the API is never served there, and ports are never served on the API's own origin.
//
// Who: the request guard takes the caller's key (Authorization: Bearer, read_write), or, with none,
// the route's own credential: a signed link's token (`?gpufleet_link=`), which is exchanged for a
// cookie of this one host and a redirect to the same URL without it, or that cookie. Then
// core/connect decides (the pod's account or an operator; a published `<port>/http`; RUNNING).
// What never reaches the pod: the caller's Authorization (and X-Api-Key), every gpufleet cookie; nor
// may the pod set one. Cross-site use of the cookie is refused: an `Origin` other than the port's own
// host, on WebSocket upgrades always, and on any cookie-borne request; a cookie-borne request a
// browser marks as coming from another site that is not a top-level navigation.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OutgoingHttpHeaders } from 'node:http';
import type { Services } from '../core/index.ts';
import { isGpufleetCookie, parseProxyHost, PORT_LINK_PARAM, type PortAccess, underProxyDomain } from '../core/index.ts';
import { GpufleetError, type PodRecord, type Principal } from '../model/index.ts';
import type { Duplex } from 'node:stream';
import { podSshTunnelRoute } from './pod-ssh-tunnel.ts';
import { containerRoute, SshConnector, type WorkerConnector } from './connectors.ts';
import type { GatewayMount } from './gateway.ts';
import { decodedPath } from './decoded-path.ts';
import { forward } from './forward.ts';
import { Tunnels } from './tunnel.ts';
import { callerUpgrade, endAnsweredUpgrade } from './upgrade-request.ts';
import { streamDispatcher } from './worker-dispatcher.ts';

/** the routes' own prefix: rewriteUrl moves a proxy host's requests here */
export const POD_PORT_PREFIX = '/.pod-port';
/** a name under the proxy domain that names no pod's port: answered 404 */
const NO_PORT = `${POD_PORT_PREFIX}-none`;

export interface PodPortOptions {
  /** how a pod's container is reached; default: SSH channels through its host (SshConnector) */
  connector?: (services: Services) => WorkerConnector;
  /** to the end of the pod's answer: no headers, or a gap in the body, longer than this ends it; default 10 min */
  timeoutMs?: number;
}

type Credential = 'key' | 'link' | 'cookie';
/** how each request authenticated (the guard's credential hook records the link and the cookie) */
const credentials = new WeakMap<FastifyRequest, Credential>();

/** `startControlPlane(config, { mounts: [podPortProxy(), loadBalancerGateway()] })` */
export function podPortProxy(opts: PodPortOptions = {}): (services: Services) => GatewayMount {
  return (services) => {
    const access = services.portAccess;
    const domain = access.proxy?.domain ?? null;
    const connector = opts.connector?.(services) ?? new SshConnector(services.sshPool, containerRoute(services.store, services.fleet, services.sshPool));
    const connectPod = (pod: PodRecord | undefined, port: number): Promise<Duplex> => {
      if (!pod?.hostId || !pod.observed?.containerId) throw new GpufleetError('BAD_GATEWAY', `Pod ${pod?.id ?? ''} has no running container.`);
      return connector.connect({ id: pod.id, hostId: pod.hostId, containerId: pod.observed.containerId }, port);
    };
    const dispatcher = streamDispatcher(async (podId, port) => connectPod(await services.store.get('pods', podId), port));
    const tunnels = new Tunnels();
    return {
      rewriteUrl(url, host) {
        if (domain && underProxyDomain(host, domain)) {
          const target = parseProxyHost(host, domain);
          const path = url.startsWith('/') ? url : `/${url}`;
          return target ? `${POD_PORT_PREFIX}/${target.podId}/${target.port}${path}` : NO_PORT;
        }
        // the prefix is reached by rewriting only (the router decodes: `/%2Epod-port/…` is the prefix too)
        if (startsWithPrefix(url) || startsWithPrefix(decodedPath(url))) return '/.pod-port-is-not-a-route';
        return undefined;
      },
      async register(app, ctx) {
        await app.register(async (scope) => routes(scope, { access, domain, principalOf: ctx.principalOf, dispatcher, tunnels, timeoutMs: opts.timeoutMs ?? 600_000 }));
        // `gpufleet pods ssh --proxy`: on the API's origin, served whether or not a proxy domain is set
        podSshTunnelRoute(app, { access, principalOf: ctx.principalOf, connect: async (pod, port) => connectPod(pod, port) });
        app.addHook('preClose', (done) => {
          tunnels.closeAll();
          done();
        });
        app.addHook('onClose', async () => dispatcher.destroy());
      },
    };
  };
}

interface RouteDeps {
  access: PortAccess;
  /** the proxy domain: a route's pod and port must be the ones its Host names there */
  domain: string | null;
  principalOf(request: FastifyRequest): Principal;
  dispatcher: ReturnType<typeof streamDispatcher>;
  tunnels: Tunnels;
  timeoutMs: number;
}

function routes(app: FastifyInstance, d: RouteDeps): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload));

  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const { podId, port } = target(request, d.domain);
    const principal = d.principalOf(request);
    await d.access.target(principal, podId, port);
    const how = credentials.get(request) ?? 'key';
    const upgrade = callerUpgrade(request);
    checkOrigin(request, how, upgrade !== null);
    const path = podPath(request.url, podId, port);
    if (path.hadLink) {
      // the link is spent here: a cookie for this host, and the same URL without the token
      if (how === 'link') reply.header('set-cookie', d.access.setCookie(principal, podId, port));
      return reply.code(303).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').header('location', path.path).send();
    }
    forward(d.dispatcher, request.raw, reply.raw, {
      origin: `http://${podId}:${port}`,
      path: path.path,
      body: hasBody(request) ? (request.body as NodeJS.ReadableStream) : null,
      timeoutMs: d.timeoutMs,
      callerIp: request.ip,
      callerProto: d.access.proxy?.scheme ?? request.protocol,
      ownHeaders: reply.getHeaders() as OutgoingHttpHeaders,
      onAnswer: () => reply.hijack(),
      onClose: () => undefined,
      ownCookie: isGpufleetCookie,
      ...(upgrade ? { upgrade: { caller: upgrade, tunnels: d.tunnels } } : {}),
    }).catch((error: unknown) => {
      if (reply.sent || reply.raw.destroyed) return;
      const why = (error as { cause?: { message?: string }; message?: string }).cause?.message ?? (error as Error).message;
      void reply.send(
        error instanceof GpufleetError ? error : new GpufleetError('BAD_GATEWAY', `Port ${port} of pod ${podId} could not be reached or broke off its answer: ${why}`, { cause: error }),
      );
    });
    return reply;
  };

  // @fastify/websocket would complete an upgrade's handshake itself: the pod completes it here
  app.addHook('onRoute', (r) => {
    if (r.url.startsWith(`${POD_PORT_PREFIX}/`)) r.handler = handler;
  });
  const route = {
    config: {
      scope: 'read_write',
      credential: (request: FastifyRequest) => credential(request, d.access, d.domain),
      // the pod's web traffic, not API calls (docs/connect.md)
      unmetered: true,
    },
    schema: { hide: true },
    exposeHeadRoute: false,
    onResponse: endAnsweredUpgrade,
  } as const;
  app.all(`${POD_PORT_PREFIX}/:podId/:port`, route, handler);
  app.all(`${POD_PORT_PREFIX}/:podId/:port/*`, route, handler);
  app.all(NO_PORT, { config: { public: true }, schema: { hide: true } }, async () => {
    throw new GpufleetError('NOT_FOUND', 'No pod port is served at this name: ports are at <pod id>-<port>.<proxy domain>.');
  });
}

/** the guard's hook (request-guard.ts, `credential`): a link's token first, else this host's cookie */
function credential(request: FastifyRequest, access: PortAccess, domain: string | null): Promise<Principal | null> | undefined {
  const { podId, port } = target(request, domain);
  const token = linkToken(request.url);
  if (token !== undefined) {
    credentials.set(request, 'link');
    return access.redeemLink(token, podId, port);
  }
  const cookie = request.headers.cookie;
  if (cookie === undefined || !cookie.includes(access.cookieName)) return undefined;
  credentials.set(request, 'cookie');
  return access.redeemCookie(cookie, podId, port);
}

/**
 * The route's pod and port, which must be the ones the Host names under the proxy domain: the routes
 * are reached by rewriting a proxy host's request only, and a path that reaches them otherwise (one
 * the router decodes to the prefix, on the API's own Host) is 404, before any credential is read.
 */
function target(request: FastifyRequest, domain: string | null): { podId: string; port: number } {
  const p = request.params as { podId: string; port: string };
  const named = domain ? parseProxyHost(request.headers.host, domain) : null;
  if (!named || named.podId !== p.podId || named.port !== Number(p.port))
    throw new GpufleetError('NOT_FOUND', 'No pod port is served at this name: ports are at <pod id>-<port>.<proxy domain>.');
  return named;
}

const startsWithPrefix = (url: string): boolean =>
  url === POD_PORT_PREFIX || url.startsWith(`${POD_PORT_PREFIX}/`) || url.startsWith(`${POD_PORT_PREFIX}-`) || url.startsWith(`${POD_PORT_PREFIX}?`);


/**
 * A browser's request from elsewhere does not use this host's cookie: an upgrade (always) or a
 * cookie-borne request whose Origin is not this host is 403, and so is a cookie-borne request the
 * browser marks cross-site or same-site (another pod's page) unless it is a top-level navigation
 * (Sec-Fetch-Mode: navigate with Sec-Fetch-Dest: document or none; a frame navigates too, as `iframe`).
 */
function checkOrigin(request: FastifyRequest, how: Credential, upgrade: boolean): void {
  const origin = request.headers.origin;
  const host = request.headers.host?.toLowerCase();
  if ((upgrade || how !== 'key') && origin !== undefined && origin !== 'null' && !sameHost(origin, host))
    throw new GpufleetError('FORBIDDEN', `Origin ${origin} may not use this port: only pages of ${host} may.`);
  if ((upgrade || how !== 'key') && origin === 'null') throw new GpufleetError('FORBIDDEN', 'An opaque Origin (null) may not use this port.');
  const site = request.headers['sec-fetch-site'];
  const dest = request.headers['sec-fetch-dest'];
  const topLevel = request.headers['sec-fetch-mode'] === 'navigate' && (dest === undefined || dest === 'document');
  if (how !== 'key' && (site === 'cross-site' || site === 'same-site') && !topLevel)
    throw new GpufleetError('FORBIDDEN', `A ${site} request may use this port's cookie only as a top-level navigation (not in a frame).`);
}

function sameHost(origin: string, host: string | undefined): boolean {
  try {
    const u = new URL(origin);
    return (u.protocol === 'https:' || u.protocol === 'http:') && u.host.toLowerCase() === host;
  } catch {
    return false;
  }
}

/** the pod's path for `/.pod-port/<id>/<port>/rest?q`, without a link's token, and whether it had one */
function podPath(url: string, podId: string, port: number): { path: string; hadLink: boolean } {
  const rest = url.slice(POD_PORT_PREFIX.length + podId.length + String(port).length + 2);
  const path = rest.startsWith('/') ? rest : `/${rest}`;
  const q = path.indexOf('?');
  if (q < 0 || !path.includes(PORT_LINK_PARAM, q)) return { path, hadLink: false };
  const params = new URLSearchParams(path.slice(q + 1));
  if (!params.has(PORT_LINK_PARAM)) return { path, hadLink: false };
  params.delete(PORT_LINK_PARAM);
  const query = params.toString();
  return { path: path.slice(0, q) + (query ? `?${query}` : ''), hadLink: true };
}

function linkToken(url: string): string | undefined {
  const q = url.indexOf('?');
  if (q < 0 || !url.includes(PORT_LINK_PARAM, q)) return undefined;
  return new URLSearchParams(url.slice(q + 1)).get(PORT_LINK_PARAM) ?? undefined;
}

function hasBody(request: FastifyRequest): boolean {
  const b = request.body as { pipe?: unknown } | undefined;
  return typeof b === 'object' && b !== null && typeof b.pipe === 'function';
}
