// The proxy domain of pods' HTTP ports (docs/connect.md): `<pod id>-<port>.<GPUFLEET_PROXY_DOMAIN>`.
// It must be a site of its own: tenant pages served under the control plane's registrable domain would
// be same-site with the console (cookies with Domain=, SameSite, document.domain games), so the server
// refuses to start when the two share one. "Registrable domain" is the Public Suffix List's (tldts,
// private section included, as browsers read it); an IP address or a single label is its own site.
import { getDomain } from 'tldts';
import type { PortProxy } from '../../model/index.ts';

/** the domain (lower case, no leading or trailing dot) and the scheme the operator's TLS front serves it with */
export type ProxySettings = PortProxy;

/** the registrable domain (eTLD+1) of a host name; an IP address or a name with no public suffix is its own */
export function registrableDomain(host: string): string {
  const name = host.replace(/^\[|\]$/g, '').replace(/\.+$/, '').toLowerCase();
  return getDomain(name, { allowPrivateDomains: true }) ?? name;
}

/** a DNS name of labels [a-z0-9-], 1 to 63 characters each, 253 in all */
const DNS_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * Why the proxy domain cannot be used with a control plane at `controlPlaneHost`, or null. Checked at
 * start (core/config.ts): the server refuses to start on any of these.
 */
export function proxyDomainProblem(domain: string, controlPlaneHost: string): string | null {
  if (!DNS_NAME.test(domain)) return `GPUFLEET_PROXY_DOMAIN=${domain} is not a DNS name (labels of a-z, 0-9 and -)`;
  const own = registrableDomain(domain);
  const cp = registrableDomain(controlPlaneHost);
  if (own === cp)
    return (
      `GPUFLEET_PROXY_DOMAIN=${domain} shares its registrable domain (${own}) with the control plane's origin (${controlPlaneHost}): ` +
      "tenant pages there would be same-site with the control plane; use a registrable domain of its own (docs/connect.md)"
    );
  return null;
}

/** `<pod id>-<port>`: pod ids are [a-z0-9] (no dash), ports 1 to 65535 without leading zeros */
const HOST_LABEL = /^([a-z0-9]{1,40})-([1-9][0-9]{0,4})$/;

/**
 * The pod and port a Host header names under the proxy domain, or null when it names none: one label
 * before the domain, by the grammar above; an optional `:port` of the listener is ignored.
 */
export function parseProxyHost(host: string | undefined, domain: string): { podId: string; port: number } | null {
  if (host === undefined || host.length > 300) return null;
  const name = host.replace(/:\d{1,5}$/, '').toLowerCase().replace(/\.$/, '');
  if (!name.endsWith(`.${domain}`)) return null;
  const m = HOST_LABEL.exec(name.slice(0, -domain.length - 1));
  if (!m) return null;
  const port = Number(m[2]);
  return port <= 65535 ? { podId: m[1]!, port } : null;
}

/** the Host is under the proxy domain (whether or not it names a pod's port) */
export function underProxyDomain(host: string | undefined, domain: string): boolean {
  if (host === undefined) return false;
  const name = host.replace(/:\d{1,5}$/, '').toLowerCase().replace(/\.$/, '');
  return name === domain || name.endsWith(`.${domain}`);
}
