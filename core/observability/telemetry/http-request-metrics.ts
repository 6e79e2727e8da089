// gpufleet_http_requests_total and gpufleet_http_request_duration_seconds, counted per request in
// plain numbers (one Map lookup by method, route and status, then a bucket search) and handed to the
// registry at scrape time in the shapes prom-client's own Counter and Histogram give it, so /metrics
// reads exactly as before. prom-client's inc and observe convert, check and hash the labels on every
// call: about 3% of a request's server time in bench/api.ts's profile, and garbage besides.
import { Counter, Histogram, type Registry } from 'prom-client';

type Label = 'method' | 'route' | 'status';
type Labels = Record<Label, string>;

interface Series {
  labels: Labels;
  count: number;
  sum: number;
  /** observations per bucket (not cumulative), in the order of the buckets */
  perBucket: number[];
}

export class HttpRequestMetrics {
  private readonly series = new Map<string, Series>();
  private readonly bounds: readonly number[];

  constructor(registry: Registry, buckets: readonly number[]) {
    this.bounds = [...buckets];
    const all = () => this.series.values();
    const forget = () => this.series.clear();
    new RequestCounter(all, forget, {
      name: 'gpufleet_http_requests_total',
      help: 'HTTP requests answered, by method, matched route pattern and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    });
    new RequestDurations(all, forget, this.bounds, {
      name: 'gpufleet_http_request_duration_seconds',
      help: 'Time from a request arriving to its response ending (a stream: until it closed)',
      labelNames: ['method', 'route', 'status'],
      buckets: [...this.bounds],
      registers: [registry],
    });
  }

  record(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let s = this.series.get(key);
    if (s === undefined) {
      s = { labels: { method, route, status: String(status) }, count: 0, sum: 0, perBucket: this.bounds.map(() => 0) };
      this.series.set(key, s);
    }
    s.count++;
    s.sum += seconds;
    for (let i = 0; i < this.bounds.length; i++)
      if (seconds <= this.bounds[i]!) {
        s.perBucket[i]!++;
        break;
      }
  }
}

type Config<T> = T extends new (config: infer C) => unknown ? C : never;

/** A Counter whose values are the series' counts (its own inc is not used). */
class RequestCounter extends Counter<Label> {
  constructor(
    private readonly all: () => Iterable<Series>,
    private readonly forget: () => void,
    config: Config<typeof Counter<Label>>,
  ) {
    super(config);
  }

  override async get(): Promise<Awaited<ReturnType<Counter<Label>['get']>>> {
    const values = [...this.all()].map((s) => ({ value: s.count, labels: s.labels }));
    return { ...metricHead(this), values, aggregator: 'sum' } as unknown as Awaited<ReturnType<Counter<Label>['get']>>;
  }

  override reset(): void {
    // prom-client's constructor calls reset before this class has its fields
    (this.forget as (() => void) | undefined)?.();
  }
}

interface ExportValue {
  labels: Record<string, string | number>;
  sharedLabels: Labels;
  value: number;
  metricName: string;
  exemplar: null | undefined;
}

/** A Histogram whose values are the series' buckets, sums and counts (its own observe is not used). */
class RequestDurations extends Histogram<Label> {
  constructor(
    private readonly all: () => Iterable<Series>,
    private readonly forget: () => void,
    private readonly bounds: readonly number[],
    config: Config<typeof Histogram<Label>>,
  ) {
    super(config);
  }

  /** what prom-client's Histogram gives the registry for the text format: the same values, in the same order */
  async getForPromString(): Promise<{ name: string; help: string; type: string; values: ExportValue[]; aggregator: 'sum' }> {
    const { name } = metricHead(this);
    const values: ExportValue[] = [];
    for (const s of this.all()) {
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += s.perBucket[i]!;
        values.push({ labels: { le }, sharedLabels: s.labels, value: acc, metricName: `${name}_bucket`, exemplar: null });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: `${name}_bucket`, exemplar: null },
        { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${name}_count`, exemplar: undefined },
      );
    }
    return { ...metricHead(this), values, aggregator: 'sum' };
  }

  override async get(): Promise<Awaited<ReturnType<Histogram<Label>['get']>>> {
    const data = await this.getForPromString();
    const values = data.values.map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return { ...data, values } as unknown as Awaited<ReturnType<Histogram<Label>['get']>>;
  }

  override reset(): void {
    // prom-client's constructor calls reset before this class has its fields
    (this.forget as (() => void) | undefined)?.();
  }
}

/** the name, help and type prom-client keeps on the metric object */
function metricHead(m: object): { name: string; help: string; type: 'counter' | 'histogram' } {
  const { name, help, type } = m as { name: string; help: string; type: 'counter' | 'histogram' };
  return { help, name, type };
}
