// process_* and nodejs_* metrics are collected once per process (core/observability/telemetry/telemetry.ts):
// prom-client's collectDefaultMetrics starts an event-loop-delay monitor (a 10 ms timer) and a GC
// observer that nothing stops, so a process starting many control planes (an embedder, this suite) must
// not start one per control plane. The monitors are counted where prom-client makes them (its
// require('perf_hooks')), and each control plane's /metrics still carries the process metrics, once.
import { createRequire } from 'node:module';
import { afterAll, expect, test } from 'vitest';
import { ADMIN_KEY, startTestControlPlane, type TestControlPlane } from '../../harness/control-plane.ts';
import { parsePrometheusText, sampleValue } from '../../harness/prometheus-text.ts';

const perfHooks = createRequire(import.meta.url)('node:perf_hooks') as typeof import('node:perf_hooks');
const open: TestControlPlane[] = [];
afterAll(async () => {
  for (const cp of open.splice(0)) await cp.close();
});

async function scrape(cp: TestControlPlane): Promise<string> {
  const res = await cp.api('/metrics', { key: ADMIN_KEY });
  expect(res.status).toBe(200);
  return res.text();
}

test('control planes started and closed in one process start no event-loop monitor each, and each /metrics has the process metrics once', async () => {
  const first = await startTestControlPlane();
  open.push(first);
  const monitor = perfHooks.monitorEventLoopDelay;
  let monitors = 0;
  perfHooks.monitorEventLoopDelay = ((o?: Parameters<typeof monitor>[0]) => {
    monitors++;
    return monitor(o);
  }) as typeof monitor;
  try {
    for (let i = 0; i < 3; i++) {
      const cp = await startTestControlPlane();
      open.push(cp);
      for (const c of [first, cp]) {
        const text = await scrape(c);
        for (const name of ['process_cpu_seconds_total', 'nodejs_eventloop_lag_seconds', 'nodejs_heap_size_used_bytes', 'nodejs_gc_duration_seconds']) {
          expect(text.split('\n').filter((l) => l === `# TYPE ${name} ${name === 'nodejs_gc_duration_seconds' ? 'histogram' : name.endsWith('_total') ? 'counter' : 'gauge'}`)).toHaveLength(1);
          expect(text.split('\n').filter((l) => l.startsWith(`# HELP ${name} `))).toHaveLength(1);
        }
        const families = parsePrometheusText(text);
        expect(sampleValue(families, 'process_cpu_seconds_total')).toBeGreaterThan(0);
        expect(families.get('gpufleet_http_requests_total')?.type).toBe('counter');
      }
      await open.pop()!.close();
    }
  } finally {
    perfHooks.monitorEventLoopDelay = monitor;
  }
  expect(monitors).toBe(0);
});
