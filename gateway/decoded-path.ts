// The path of a request URL as Fastify's router reads it (percent-decoded), for the checks that keep
// a mount's internal prefix reachable by rewriting only (`/%2Epod-port/…` routes as `/.pod-port/…`).

/** the URL's path, percent-decoded; '' when it does not decode (the router answers 400 then) */
export function decodedPath(url: string): string {
  const q = url.indexOf('?');
  try {
    return decodeURIComponent(q < 0 ? url : url.slice(0, q));
  } catch {
    return '';
  }
}
