// Test worker images for end-to-end tests of serverless endpoints, built locally (no registry is
// reachable) and cached by a hash of their inputs in the tag, so each machine builds each version
// once and CI builds them from nothing. Concurrent vitest workers serialise on a lock directory.
//   ensureNodeWorkerImage():   the gpufleet TypeScript worker SDK + test handler on this machine's node
//   ensurePythonWorkerImage(): runpod-python's own worker, unmodified, on Debian bookworm
// Both answer the same job inputs (worker-handlers/node-test-handler.ts says which) and read the
// RUNPOD_* worker environment; the image's CMD starts the worker.
import { fileURLToPath } from 'node:url';
import { buildNodeWorkerImage, NODE_WORKER_REPO, nodeWorkerInputs } from './node-worker-image.ts';
import { buildPythonWorkerImage, PYTHON_WORKER_REPO, pythonWorkerInputs } from './python-worker-image.ts';
import { imageExists, pruneOtherTags, reportBuild, withBuildLock } from './worker-image-build.ts';

export { NODE_WORKER_REPO, PYTHON_WORKER_REPO };

const memo = new Map<string, Promise<string>>();

/** Ensures the Node worker image for the current SDK + handler exists; resolves with its ref. */
export function ensureNodeWorkerImage(): Promise<string> {
  return once('node', async () => {
    const inputs = await nodeWorkerInputs();
    return ensure(inputs.ref, NODE_WORKER_REPO, 5 * 60_000, () => buildNodeWorkerImage(inputs));
  });
}

export const LB_WORKER_REPO = 'gpufleet-test/lb-worker';

/** The load-balancing test worker (worker-handlers/lb-test-server.ts) on the Node image's base; its ref. */
export function ensureLbWorkerImage(): Promise<string> {
  return once('lb', async () => {
    const inputs = await nodeWorkerInputs(fileURLToPath(new URL('./worker-handlers/lb-test-main.ts', import.meta.url)), LB_WORKER_REPO);
    return ensure(inputs.ref, LB_WORKER_REPO, 5 * 60_000, () => buildNodeWorkerImage(inputs));
  });
}

export const PORT_SERVER_REPO = 'gpufleet-test/port-server';

/** The pod port test server (worker-handlers/port-test-main.ts: HTTP, SSE, WebSocket) on the Node image's base; its ref. */
export function ensurePortServerImage(): Promise<string> {
  return once('port-server', async () => {
    const inputs = await nodeWorkerInputs(fileURLToPath(new URL('./worker-handlers/port-test-main.ts', import.meta.url)), PORT_SERVER_REPO);
    return ensure(inputs.ref, PORT_SERVER_REPO, 5 * 60_000, () => buildNodeWorkerImage(inputs));
  });
}

/**
 * Ensures the Python worker image exists; resolves with its ref. The first build takes about a minute
 * and a half (debootstrap and apt from the Debian mirror); needs root and debootstrap.
 */
export function ensurePythonWorkerImage(): Promise<string> {
  return once('python', async () => {
    const inputs = await pythonWorkerInputs();
    return ensure(inputs.ref, PYTHON_WORKER_REPO, 15 * 60_000, () => buildPythonWorkerImage(inputs));
  });
}

/** `fn` once per process and key (a failure lets a later call retry); model-images.ts uses it too */
export function once(key: string, fn: () => Promise<string>): Promise<string> {
  let p = memo.get(key);
  if (!p) {
    p = fn().catch((e: unknown) => {
      memo.delete(key); // let a later call retry
      throw e;
    });
    memo.set(key, p);
  }
  return p;
}

/** `ref` if it exists, else built once under the repository's lock; older tags of `repo` removed */
export async function ensure(ref: string, repo: string, staleMs: number, build: () => Promise<void>): Promise<string> {
  if (await imageExists(ref)) return ref;
  return withBuildLock(repo.replace(/\W+/g, '-'), staleMs, async () => {
    if (await imageExists(ref)) return ref; // another worker built it while we waited
    const started = Date.now();
    await build();
    await reportBuild(ref, started);
    await pruneOtherTags(repo, ref);
    return ref;
  });
}
