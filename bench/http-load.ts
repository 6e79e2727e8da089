// A small keep-alive HTTP load generator for the benches. It runs in a worker thread so the client's
// own CPU does not share the event loop with the server under test (the control plane runs in the
// bench's main thread). Work is given as lanes: each lane is a sequence of requests sent one after
// another; `concurrency` lanes run at once, so that many requests are in flight.
import type fs from 'node:fs';
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
  /** CPU time of the client's own thread per request, µs (Linux; NaN elsewhere) */
  clientCpuUs: number;
}

/**
 * A load generator that stays: one worker thread for many runs, so the client's code is as warm (JIT)
 * in the last run as in the first. A fresh thread per run (runLoad) pays its warm-up inside every run:
 * measured here, Node's http client costs about twice as much per request in its first few thousand
 * requests, which flatters any ratio whose baseline the client limits.
 */
export class LoadClient {
  private readonly worker: Worker;
  private queue: Promise<unknown> = Promise.resolve();

  constructor() {
    // plain JavaScript (an eval worker does not get the TypeScript loader); see `work` below
    this.worker = new Worker(
      `var __name = (f) => f; /* esbuild keepNames helper */
const { parentPort } = require('node:worker_threads');
const work = ${work.toString()};
parentPort.on('message', (spec) => work(spec, require('node:http'), require('node:fs')).then(
  (result) => parentPort.postMessage({ ok: true, result }),
  (e) => parentPort.postMessage({ ok: false, error: String((e && e.message) || e) })));`,
      { eval: true },
    );
    this.worker.unref();
  }

  /** Runs the lanes (one run at a time: runs asked for together are queued). */
  run(spec: LoadSpec): Promise<LoadResult> {
    const next = this.queue.then(
      () =>
        new Promise<LoadResult>((resolve, reject) => {
          const onError = (e: Error): void => reject(e);
          this.worker.once('error', onError);
          this.worker.once('message', (m: { ok: true; result: LoadResult } | { ok: false; error: string }) => {
            this.worker.off('error', onError);
            if (m.ok) resolve(m.result);
            else reject(new Error(m.error));
          });
          this.worker.postMessage(spec);
        }),
    );
    this.queue = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

/** Runs the lanes in a worker thread of its own, started for this run (its warm-up is in the run). */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const client = new LoadClient();
  try {
    return await client.run(spec);
  } finally {
    await client.close();
  }
}

/** the worker's body: self-contained (it is serialised with toString), no imports, no TypeScript-only runtime */
async function work(spec: LoadSpec, httpModule: typeof http, fsModule: typeof fs): Promise<LoadResult> {
  // this thread's user + system time in clock ticks (fields 14 and 15 of /proc/thread-self/stat)
  const cpuTicks = (): number => {
    try {
      const f = fsModule.readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ');
      return Number(f[11]) + Number(f[12]);
    } catch {
      return Number.NaN;
    }
  };
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
  const c0 = cpuTicks();
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
  // clock ticks are 10 ms (USER_HZ 100 on Linux)
  const clientCpuUs = ((cpuTicks() - c0) * 10_000) / done;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return { done, seconds, perSecond: done / seconds, p50: pct(0.5), p99: pct(0.99), clientCpuUs };
}
