// A hostile registry for tests (issue 18): it speaks enough of the distribution API for `docker pull`
// to fetch a manifest, then answers every blob with a redirect to `blobUrl` (a service on the host's
// loopback, say), where no name check of the control plane reaches. And a service that answers every
// request with a secret, as a registry error, the way docker quotes it in its own message.
import http from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';

export interface LoopbackSecretService {
  /** `127.0.0.1:<port>` */
  readonly address: string;
  readonly secret: string;
  /** requests it answered */
  readonly hits: string[];
  close(): Promise<void>;
}

/** Answers every request 403 with `secret` as a registry's error message (docker prints `denied: <secret>`). */
export async function startLoopbackSecretService(secret: string): Promise<LoopbackSecretService> {
  const hits: string[] = [];
  const srv = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(403, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ errors: [{ code: 'DENIED', message: secret }] }));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  return { address: `127.0.0.1:${port}`, secret, hits, close: () => closeServer(srv) };
}

export interface RedirectingRegistry {
  /** `127.0.0.1:<port>`: docker reaches it over plain HTTP (loopback registries are insecure by default) */
  readonly address: string;
  /** requests it answered */
  readonly hits: string[];
  close(): Promise<void>;
}

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** Serves the manifest of any `<repo>:<tag>`; every blob is a 307 to `blobUrl`. */
export async function startRedirectingRegistry(blobUrl: string): Promise<RedirectingRegistry> {
  const config = Buffer.from('{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}');
  const layer = Buffer.from('layer');
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
      config: { mediaType: 'application/vnd.docker.container.image.v1+json', size: config.length, digest: sha256(config) },
      layers: [{ mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip', size: layer.length, digest: sha256(layer) }],
    }),
  );
  const hits: string[] = [];
  const srv = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.setHeader('Docker-Distribution-API-Version', 'registry/2.0');
    const url = req.url ?? '';
    if (url === '/v2/') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    } else if (url.includes('/manifests/')) {
      res.writeHead(200, { 'content-type': 'application/vnd.docker.distribution.manifest.v2+json', 'docker-content-digest': sha256(manifest), 'content-length': manifest.length });
      res.end(req.method === 'HEAD' ? undefined : manifest);
    } else if (url.includes('/blobs/')) {
      res.writeHead(307, { location: blobUrl });
      res.end();
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  return { address: `127.0.0.1:${port}`, hits, close: () => closeServer(srv) };
}

function closeServer(srv: http.Server): Promise<void> {
  srv.closeAllConnections();
  return new Promise((r) => srv.close(() => r()));
}
