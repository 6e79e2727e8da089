// A gauge computed at each scrape from state, for metrics that describe what is rather than what
// happened (pods by status, GPUs by state): exact without instrumenting every write.
import { Gauge, type Registry } from 'prom-client';

/** `collect` sets the values; the gauge is emptied first, so a label set it no longer sets disappears. */
export function scrapeGauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  collect: (set: (labels: Record<L, string>, value: number) => void) => Promise<void> | void,
): Gauge<L> {
  return new Gauge<L>({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      await collect((labels, value) => this.set(labels as never, value));
    },
  });
}
