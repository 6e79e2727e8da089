import { parentPort, workerData } from 'node:worker_threads';
import { startWorker } from '../worker/index.ts';
import { workerEnv } from '../test/job-interface/in-process-workers.ts';
const { url, ep, ids, key, jobs, lanes, bareUrl } = workerData as { url: string; ep: string; ids: { workerId: string; token: string }[]; key: string; jobs: number; lanes: number; bareUrl: string };
const quiet = { debug: () => undefined, info: () => undefined, error: () => undefined };
const OUTPUT = { image_url: 'https://example.invalid/results/0f8a1c7e-3b8f-4c55-9a8b-5b3e0e6c9d11.png', seed: 42 };
const INPUT = { prompt: 'a photo of an astronaut riding a horse on the moon, 4k, detailed', steps: 30, seed: 42 };
const ws = ids.map((id) => startWorker({ handler: () => OUTPUT, concurrency: 1, handleSignals: false, env: workerEnv(url, ep, id.workerId, id.token, 10_000), logger: quiet }));
const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const runBody = JSON.stringify({ input: INPUT });
parentPort!.on('message', async (m: string) => {
  if (m === 'stop') { await Promise.all(ws.map((w) => w.stop())); parentPort!.postMessage('stopped'); return; }
  if (m === 'bare') {
    let sent = 0; const n = jobs * 3;
    await Promise.all(Array.from({ length: lanes }, async () => { while (sent < n) { sent++; await (await fetch(bareUrl)).arrayBuffer(); } }));
    parentPort!.postMessage('sent'); return;
  }
  let sent = 0;
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (sent < jobs) { sent++; const res = await fetch(`${url}/v2/${ep}/run`, { method: 'POST', headers: auth, body: runBody }); await res.arrayBuffer(); if (res.status !== 200) throw new Error(`run ${res.status}`); }
  }));
  parentPort!.postMessage('sent');
});
parentPort!.postMessage('ready');
