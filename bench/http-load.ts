// A small keep-alive HTTP load generator for the benches. It runs in a worker thread so the client's
// own CPU does not share the event loop with the server under test (the control plane runs in the
// bench's main thread). Work is given as lanes: each lane is a sequence of requests sent one after
// another; `concurrency` lanes run at once, so that many requests are in flight.
import http from 'node:http';
import { Worker } from 'node:worker_threads';

export interface LoadRequest {
  method: string;
  path: string;
  body?: string;
  /** the status that counts as success; anything else stops the run with an error */
  expect: number;
}

export interface LoadSpec {
  url: string;
  headers: Record<string, string>;
  lanes: LoadRequest[][];
  concurrency: number;
}

export interface LoadResult {
  done: number;
  seconds: number;
  perSecond: number;
  /** latency percentiles in ms */
  p50: number;
  p99: number;
}

/** Runs the lanes in a worker thread and reports what it measured there. */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    // plain JavaScript (an eval worker does not get the TypeScript loader); see `work` below
    const worker = new Worker(`var __name = (f) => f; /* esbuild keepNames helper */
(${work.toString()})(require('node:worker_threads').workerData, require('node:http'))
      .then((result) => require('node:worker_threads').parentPort.postMessage({ ok: true, result }),
            (e) => require('node:worker_threads').parentPort.postMessage({ ok: false, error: String(e && e.message || e) }));`, {
      eval: true,
      workerData: spec,
    });
    worker.once('message', (m: { ok: true; result: LoadResult } | { ok: false; error: string }) => {
      if (m.ok) resolve(m.result);
      else reject(new Error(m.error));
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

/** the worker's body: self-contained (it is serialised with toString), no imports, no TypeScript-only runtime */
async function work(spec: LoadSpec, httpModule: typeof http): Promise<LoadResult> {
  const u = new URL(spec.url);
  const agent = new httpModule.Agent({ keepAlive: true, maxSockets: spec.concurrency });
  const latencies: number[] = [];
  const send = (r: LoadRequest) =>
    new Promise<void>((resolve, reject) => {
      const t = performance.now();
      const headers: Record<string, string | number> = { ...spec.headers };
      if (r.body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(r.body);
      }
      const req = httpModule.request({ agent, host: u.hostname, port: u.port, method: r.method, path: r.path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          latencies.push(performance.now() - t);
          if (res.statusCode !== r.expect)
            reject(new Error(`${r.method} ${r.path}: ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 300)}`));
          else resolve();
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(r.body);
    });
  let next = 0;
  let done = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: spec.concurrency }, async () => {
      while (next < spec.lanes.length) {
        const lane = spec.lanes[next++]!;
        for (const r of lane) {
          await send(r);
          done++;
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { done, seconds, perSecond: done / seconds, p50: pct(0.5), p99: pct(0.99) };
}
