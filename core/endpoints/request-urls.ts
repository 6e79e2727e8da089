// The URLs an endpoint is called at (`requestUrls` of the v1 and v2 endpoint records,
// runpod-compat.md 3.5): the job interface's routes for a queue endpoint; for a load balancer its base
// (any path under it is the worker's, docs/gateway.md) and its health check.

export type RequestUrls =
  | { base: string; health: string }
  | { run: string; runSync: string; status: string; stream: string; cancel: string; retry: string; purgeQueue: string; health: string };

/**
 * `origin` is where the caller reached the API. With GPUFLEET_LB_DOMAIN a load balancer's base is
 * `<scheme>://<endpoint id>.<domain>[:port]`, as the public platform's `<id>.api.runpod.ai`.
 */
export function endpointRequestUrls(e: { id: string; type: 'QUEUE' | 'LOAD_BALANCER' }, origin: string, lbDomain?: string): RequestUrls {
  if (e.type === 'LOAD_BALANCER') {
    let base = `${origin}/v2/${e.id}`;
    if (lbDomain) {
      const u = new URL(origin);
      base = `${u.protocol}//${e.id}.${lbDomain}${u.port ? `:${u.port}` : ''}`;
    }
    return { base, health: `${base}/ping` };
  }
  const base = `${origin}/v2/${e.id}`;
  return {
    run: `${base}/run`,
    runSync: `${base}/runsync`,
    status: `${base}/status/{jobId}`,
    stream: `${base}/stream/{jobId}`,
    cancel: `${base}/cancel/{jobId}`,
    retry: `${base}/retry/{jobId}`,
    purgeQueue: `${base}/purge-queue`,
    health: `${base}/health`,
  };
}
