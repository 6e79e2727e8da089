// A registry that trickles, for pull tests (issue 18, item 2): a small node:http server speaking
// just enough of the registry v2 API for `docker pull` (ping, manifest by tag, config and layer
// blobs). Each registry serves one image per repository, made of a fresh random layer (so no earlier
// run left it in the engine's cache). The layer's first half goes out at once, the rest in small
// chunks at a slow pace; pause() stops sending altogether (a registry that hangs mid-blob). Docker
// treats 127.0.0.0/8 as insecure, so plain HTTP works without daemon changes.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';

export interface TrickleRegistryOptions {
  /** the layer's size before gzip (random bytes, so about the same after) */
  layerBytes?: number;
  /** after the first half: this many bytes every `tickMs` */
  chunkBytes?: number;
  tickMs?: number;
}

export interface TrickleRegistry {
  /** `127.0.0.1:<port>` */
  readonly address: string;
  /** `<address>/<repo>:1` */
  ref(repo: string): string;
  /** the layer's compressed size, as docker reports it */
  readonly layerSize: number;
  /** requests for a manifest by tag so far (one per `docker pull` that reached the registry) */
  manifestAsks(repo: string): number;
  /** layer downloads whose connection is still open */
  readonly openBlobs: number;
  /** stops sending blob bytes (connections stay open, silent) */
  pause(): void;
  /** sends again at the trickle pace; `fast`: the rest at once */
  resume(opts?: { fast?: boolean }): void;
  close(): Promise<void>;
}

const sha = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** A one-file ustar archive (the layer's content). */
function tarOf(name: string, data: Buffer): Buffer {
  const h = Buffer.alloc(512);
  const put = (s: string, at: number, len: number) => h.write(s.slice(0, len), at, len, 'ascii');
  put(name, 0, 100);
  put('0000644\0', 100, 8);
  put('0000000\0', 108, 8);
  put('0000000\0', 116, 8);
  put(`${data.length.toString(8).padStart(11, '0')}\0`, 124, 12);
  put(`${Math.floor(Date.now() / 1000).toString(8).padStart(11, '0')}\0`, 136, 12);
  put('        ', 148, 8);
  put('0', 156, 1);
  put('ustar\0', 257, 6);
  put('00', 263, 2);
  let sum = 0;
  for (const b of h) sum += b;
  put(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  const pad = Buffer.alloc((512 - (data.length % 512)) % 512);
  return Buffer.concat([h, data, pad, Buffer.alloc(1024)]);
}

export async function startTrickleRegistry(opts: TrickleRegistryOptions = {}): Promise<TrickleRegistry> {
  const tar = tarOf('trickle.bin', randomBytes(opts.layerBytes ?? 256 * 1024));
  const layer = gzipSync(tar, { level: 1 });
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      config: { Cmd: ['/trickle.bin'] },
      rootfs: { type: 'layers', diff_ids: [sha(tar)] },
      history: [{ created_by: 'gpufleet trickle registry' }],
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
      config: { mediaType: 'application/vnd.docker.container.image.v1+json', size: config.length, digest: sha(config) },
      layers: [{ mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip', size: layer.length, digest: sha(layer) }],
    }),
  );
  const manifestCount = new Map<string, number>();
  let paused = false;
  let fast = false;
  const senders = new Set<() => void>();
  const sockets = new Set<Socket>();
  let openBlobs = 0;
  const chunk = opts.chunkBytes ?? 4096;
  const tickMs = opts.tickMs ?? 1000;

  const sendLayer = (res: ServerResponse) => {
    openBlobs++;
    res.once('close', () => openBlobs--);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': layer.length, 'docker-content-digest': sha(layer) });
    let at = Math.floor(layer.length / 2);
    res.write(layer.subarray(0, at));
    const tick = () => {
      if (res.destroyed) return;
      if (!paused) {
        const next = fast ? layer.length : Math.min(layer.length, at + chunk);
        res.write(layer.subarray(at, next));
        at = next;
        if (at >= layer.length) {
          res.end();
          return;
        }
      }
      const t = setTimeout(tick, fast ? 0 : tickMs);
      res.once('close', () => clearTimeout(t));
    };
    senders.add(tick);
    res.once('close', () => senders.delete(tick));
    setTimeout(tick, tickMs);
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    const m = /^\/v2\/(.+)\/(manifests|blobs)\/([^/]+)$/.exec(url);
    if (url === '/v2/' || url === '/v2') {
      res.writeHead(200, { 'content-type': 'application/json', 'docker-distribution-api-version': 'registry/2.0' }).end('{}');
    } else if (m && m[2] === 'manifests') {
      if (!m[3]!.startsWith('sha256:')) manifestCount.set(m[1]!, (manifestCount.get(m[1]!) ?? 0) + 1);
      res.writeHead(200, {
        'content-type': 'application/vnd.docker.distribution.manifest.v2+json',
        'content-length': manifest.length,
        'docker-content-digest': sha(manifest),
      });
      res.end(req.method === 'HEAD' ? undefined : manifest);
    } else if (m && m[3] === sha(config)) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': config.length, 'docker-content-digest': sha(config) });
      res.end(req.method === 'HEAD' ? undefined : config);
    } else if (m && m[3] === sha(layer) && req.method === 'GET') {
      sendLayer(res);
    } else if (m && m[3] === sha(layer)) {
      res.writeHead(200, { 'content-length': layer.length, 'docker-content-digest': sha(layer) }).end();
    } else {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"errors":[{"code":"NOT_FOUND","message":"not here"}]}');
    }
  };

  const server = createServer(handle);
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    address,
    layerSize: layer.length,
    ref: (repo) => `${address}/${repo}:1`,
    manifestAsks: (repo) => manifestCount.get(repo) ?? 0,
    get openBlobs() {
      return openBlobs;
    },
    pause() {
      paused = true;
    },
    resume(o = {}) {
      paused = false;
      fast = o.fast === true;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
