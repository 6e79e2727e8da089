// Who may open a pod's HTTP port through the proxy (docs/connect.md): the pod's account, or an
// operator, with a read_write key sent as `Authorization: Bearer`, or in a browser through a signed
// link (POST /v2/pods/{id}/ports/{port}/link) that the proxy host exchanges for a cookie of its own.
// Only ports the pod publishes as `<port>/http` are served, and only while it runs.
import { GpufleetError, podPortUrl, type PodRecord, type Principal } from '../../model/index.ts';
import type { StoreReader } from '../../store/index.ts';
import type { ProxySettings } from './proxy-domain.ts';
import { PortTokens } from './port-tokens.ts';

/** a signed link is good this long after it was made */
export const PORT_LINK_TTL_S = 60;
/** the cookie a link is exchanged for is good this long (a working day) */
export const PORT_COOKIE_TTL_S = 8 * 3600;
/** the query parameter a signed link carries its token in; the proxy takes it away before anything else */
export const PORT_LINK_PARAM = 'gpufleet_link';

/** what the signing key is derived for from the control plane's secret key (SecretBox.deriveKey) */
export const PORT_LINK_KEY_PURPOSE = 'pod-port-links/v1';

/** every cookie of gpufleet's own: never sent on to a pod (its name with or without a prefix) */
export const isGpufleetCookie = (name: string): boolean => /^(__Host-|__Secure-)?gpufleet/i.test(name.trim());

export interface KeyPrincipals {
  principalOfKey(keyId: string): Promise<Principal | null>;
}

/** a path a link may lead to on the port's host: absolute, no scheme-relative `//`, printable */
const LINK_PATH = /^\/(?!\/)[\x21-\x7e]{0,2047}$/;

export class PortAccess {
  private readonly tokens: PortTokens;

  constructor(
    private readonly store: StoreReader,
    private readonly keys: KeyPrincipals,
    signingKey: Buffer,
    /** null: no proxy domain is set, and no port has a URL */
    readonly proxy: ProxySettings | null,
    private readonly clock: () => number = Date.now,
  ) {
    this.tokens = new PortTokens(signingKey);
  }

  /** the cookie's name: `__Host-` on https, which a sibling host cannot set or shadow */
  get cookieName(): string {
    return this.proxy?.scheme === 'http' ? 'gpufleet-port' : '__Host-gpufleet-port';
  }

  /**
   * The pod, when `principal` may open its `port`: its own account's (or an operator), the port
   * published as `<port>/http`, the pod RUNNING. 404 otherwise (409 for a pod that is not running).
   */
  async target(principal: Principal, podId: string, port: number): Promise<PodRecord> {
    if (!this.proxy) throw new GpufleetError('NOT_FOUND', 'Pod ports are not served here: the control plane has no GPUFLEET_PROXY_DOMAIN.');
    return this.runningPod(principal, podId, (pod) => {
      if (!pod.ports.includes(`${port}/http`))
        throw new GpufleetError('NOT_FOUND', `Pod ${podId} publishes no HTTP port ${port} (its ports: ${pod.ports.join(', ') || 'none'}).`);
    });
  }

  /**
   * The pod, when `principal` may open a byte stream to its port 22 (`gpufleet pods ssh --proxy`,
   * docs/connect.md): its own account's (or an operator), RUNNING. No port needs publishing.
   */
  sshTarget(principal: Principal, podId: string): Promise<PodRecord> {
    return this.runningPod(principal, podId, () => undefined);
  }

  /** the pod, the principal's (or any, for an operator), `check`ed, then RUNNING with a container: else 404 / 409 */
  private async runningPod(principal: Principal, podId: string, check: (pod: PodRecord) => void): Promise<PodRecord> {
    const pod = await this.store.get('pods', podId);
    if (!pod || pod.endpointId !== undefined || (pod.accountId !== principal.accountId && !principal.operator))
      throw new GpufleetError('NOT_FOUND', `Pod ${podId} was not found.`);
    check(pod);
    if (pod.status !== 'RUNNING' || !pod.hostId || !pod.observed?.containerId)
      throw new GpufleetError('CONFLICT', `Pod ${podId} is ${pod.status}; it is reached while it is RUNNING.`, { fields: { status: pod.status } });
    return pod;
  }

  /** POST /v2/pods/{id}/ports/{port}/link: a URL good for PORT_LINK_TTL_S that opens the port in a browser */
  async issueLink(principal: Principal, podId: string, port: number, body: unknown): Promise<{ url: string; expiresAt: string }> {
    const path = linkPath(body);
    const pod = await this.target(principal, podId, port);
    const expiresAt = Math.floor(this.clock() / 1000) + PORT_LINK_TTL_S;
    const token = this.tokens.sign('link', { podId: pod.id, port, accountId: principal.accountId, keyId: principal.keyId, expiresAt });
    const url = `${podPortUrl(pod.id, port, this.proxy!)}${path}${path.includes('?') ? '&' : '?'}${PORT_LINK_PARAM}=${token}`;
    return { url, expiresAt: new Date(expiresAt * 1000).toISOString() };
  }

  /** the principal a link token stands for, when it is good for this pod and port and its key still is */
  async redeemLink(token: string, podId: string, port: number): Promise<Principal | null> {
    return this.redeem('link', token, podId, port);
  }

  /** the principal of this request's gpufleet cookie for the pod and port, or null */
  async redeemCookie(cookieHeader: string | undefined, podId: string, port: number): Promise<Principal | null> {
    const value = cookieValue(cookieHeader, this.cookieName);
    return value === undefined ? null : this.redeem('cookie', value, podId, port);
  }

  /** `Set-Cookie` for this port's host: host-only (no Domain), HttpOnly, Secure on https, SameSite=Lax */
  setCookie(principal: Principal, podId: string, port: number): string {
    const expiresAt = Math.floor(this.clock() / 1000) + PORT_COOKIE_TTL_S;
    const value = this.tokens.sign('cookie', { podId, port, accountId: principal.accountId, keyId: principal.keyId, expiresAt });
    const secure = this.proxy?.scheme === 'http' ? '' : '; Secure';
    return `${this.cookieName}=${value}; Path=/; Max-Age=${PORT_COOKIE_TTL_S}; HttpOnly${secure}; SameSite=Lax`;
  }

  private async redeem(kind: 'link' | 'cookie', token: string, podId: string, port: number): Promise<Principal | null> {
    const claims = this.tokens.verify(kind, token, podId, port, this.clock());
    if (!claims) return null;
    const principal = await this.keys.principalOfKey(claims.keyId);
    return principal && principal.accountId === claims.accountId ? principal : null;
  }
}

/** The path a link body names (POST /v2/pods/{id}/ports/{port}/link), or the refusal: the route's body validator too. */
export function linkPath(body: unknown): string {
  if (body === undefined || body === null) return '/';
  const path = typeof body === 'object' && !Array.isArray(body) ? (body as { path?: unknown }).path : body;
  const extra = typeof body === 'object' && body !== null ? Object.keys(body).filter((k) => k !== 'path') : [];
  if (extra.length) throw new GpufleetError('VALIDATION_FAILED', `Unknown field ${extra[0]}: a link takes only path.`, { errors: extra.map((k) => `$.${k}: unknown field`) });
  if (path === undefined) return '/';
  if (typeof path !== 'string' || !LINK_PATH.test(path) || path.includes(`${PORT_LINK_PARAM}=`))
    throw new GpufleetError('VALIDATION_FAILED', 'path is an absolute path on the port (it starts with one /), of printable characters, at most 2048.', {
      errors: ['$.path: must be an absolute path such as /lab'],
    });
  return path;
}

/** the value of cookie `name` in a Cookie header (the first, when sent twice) */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  let found: string | undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) found ??= part.slice(eq + 1).trim();
  }
  return found;
}
