// The HTTP request metrics are counted by the control plane's own counters
// (core/observability/telemetry/http-request-metrics.ts) but read as prom-client's Counter and
// Histogram would give them: the same observations fed to both give the same /metrics text, byte for
// byte (label escaping, bucket edges, +Inf, sums), and the same JSON; reset empties them.
import { Counter, Histogram, Registry } from 'prom-client';
import { expect, test } from 'vitest';
import { Telemetry } from '../../../core/index.ts';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120];

function promClientRegistry(): { registry: Registry; observe: (method: string, route: string, status: number, seconds: number) => void } {
  const registry = new Registry();
  const labelNames = ['method', 'route', 'status'] as const;
  const c = new Counter({ name: 'gpufleet_http_requests_total', help: 'HTTP requests answered, by method, matched route pattern and status', labelNames, registers: [registry] });
  const h = new Histogram({
    name: 'gpufleet_http_request_duration_seconds',
    help: 'Time from a request arriving to its response ending (a stream: until it closed)',
    labelNames,
    buckets: BUCKETS,
    registers: [registry],
  });
  return {
    registry,
    observe: (method, route, status, seconds) => {
      const labels = { method, route, status: String(status) };
      c.inc(labels);
      h.observe(labels, seconds);
    },
  };
}

const HTTP_METRICS = /^(# (HELP|TYPE) )?gpufleet_http_request/;
const httpLines = async (r: Registry) => (await r.metrics()).split('\n').filter((l) => HTTP_METRICS.test(l));

test('the same observations read as prom-client would write them: text and JSON', async () => {
  const t = new Telemetry({ processMetrics: false });
  const p = promClientRegistry();
  const observations: [string, string, number, number][] = [];
  const routes = ['/v2/pods/:id', '/v2/pods', 'unmatched', '/v2/"odd"\\route\nwith breaks'];
  // on bucket edges, between them, past the last one, zero
  const seconds = [0, 0.005, 0.0050001, 0.01, 0.3, 1, 2.5, 119.9, 120, 121, 3600];
  routes.forEach((route, i) =>
    seconds.forEach((s, j) => observations.push([j % 3 === 0 ? 'POST' : 'GET', route, [200, 404, 429, 101][(i + j) % 4]!, s + i * 1e-4])),
  );
  for (const [m, r, st, s] of observations) {
    t.httpRequest({ method: m, route: r, status: st, seconds: s });
    p.observe(m, r, st, s);
  }
  const ours = await httpLines(t.registry);
  expect(ours.length).toBeGreaterThan(100);
  expect(ours).toEqual(await httpLines(p.registry));
  const json = async (r: Registry) => (await r.getMetricsAsJSON()).filter((m) => m.name.startsWith('gpufleet_http_request'));
  expect(JSON.parse(JSON.stringify(await json(t.registry)))).toEqual(JSON.parse(JSON.stringify(await json(p.registry))));
  // what a test reads through the registry (test/gateway/lb-websocket.test.ts)
  const counted = await t.registry.getSingleMetric('gpufleet_http_requests_total')!.get();
  expect(counted.values.filter((v) => v.labels.status === '101').reduce((n, v) => n + v.value, 0)).toBe(observations.filter((o) => o[2] === 101).length);
  t.registry.resetMetrics();
  p.registry.resetMetrics();
  expect(await httpLines(t.registry)).toEqual(await httpLines(p.registry));
});
