// The load-balancing test worker (docs/gateway.md): a plain node:http server, run on PORT (default
// 80) by the LB worker image (lb-test-main.ts, worker-images.ts ensureLbWorkerImage) and in-process
// by tests and the bench (startLbTestServer).
//   GET  /ping          200 (204 while GPUFLEET_TEST_INIT_MS since start has not passed; always 204
//                       with GPUFLEET_TEST_NEVER_READY=true; PORT_HEALTH if set)
//   *    /echo…         {method, path, url, headers, body (utf8, null past 64 KiB), bytes, worker}: what the worker received
//   GET  /sse?n=3&gapMs=500  n server-sent events, gapMs apart, then the end
//   GET  /slow?ms=N     answers {slept: N} after N ms (nothing is sent before)
//   GET  /kb            1 KB of text at once (the bench)
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const KB = 'x'.repeat(1024);

export function lbTestHandler(env: NodeJS.ProcessEnv = process.env): (req: IncomingMessage, res: ServerResponse) => void {
  const started = Date.now();
  const initMs = Number(env.GPUFLEET_TEST_INIT_MS ?? 0);
  const neverReady = env.GPUFLEET_TEST_NEVER_READY === 'true';
  const worker = env.RUNPOD_POD_ID ?? 'local';
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://worker');
    res.setHeader('x-worker', worker);
    if (url.pathname === '/ping') {
      res.statusCode = neverReady || Date.now() - started < initMs ? 204 : 200;
      res.end(res.statusCode === 200 ? '{"status":"healthy"}' : undefined);
      return;
    }
    if (url.pathname === '/kb') {
      res.setHeader('content-type', 'text/plain');
      res.end(KB);
      return;
    }
    if (url.pathname.startsWith('/echo')) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        res.setHeader('content-type', 'application/json');
        // a large body is only counted: echoing megabytes back would measure JSON, not the gateway
        const text = body.length <= 65_536 ? body.toString('utf8') : null;
        res.end(JSON.stringify({ method: req.method, path: url.pathname, url: req.url, headers: req.headers, body: text, bytes: body.length, worker }));
      });
      return;
    }
    if (url.pathname === '/sse') {
      const n = Number(url.searchParams.get('n') ?? 3);
      const gap = Number(url.searchParams.get('gapMs') ?? 500);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let i = 0;
      const next = (): void => {
        res.write(`id: ${i}\ndata: ${JSON.stringify({ i, at: Date.now() })}\n\n`);
        if (++i < n) setTimeout(next, gap);
        else res.end();
      };
      next();
      return;
    }
    if (url.pathname === '/slow') {
      const ms = Number(url.searchParams.get('ms') ?? 1000);
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ slept: ms, worker }));
      }, ms);
      return;
    }
    res.statusCode = 404;
    res.end('not found');
  };
}

/** In-process: the same routes on 127.0.0.1 (or `host`), any free port unless given. */
export async function startLbTestServer(opts: { port?: number; host?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer(lbTestHandler(opts.env ?? {}));
  await new Promise<void>((r) => server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', r));
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
