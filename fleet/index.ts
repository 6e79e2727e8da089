// The fleet's public surface.
export { SshPool, type SshTarget, type ExecResult } from './ssh-pool.ts';
export { probeHost, parseGpuMetrics, GPU_METRICS_COMMAND } from './host-probe.ts';
export { Scheduler, placementError } from './scheduler.ts';
export * from './gpu-catalog.ts';
export * from './price-book.ts';
export * from './cpu-catalog.ts';
export * from './stock.ts';
export * from './host-probe.ts';
export * from './placement.ts';
export * from './placement-plan.ts';
export * from './host-load.ts';
export * from './scheduler.ts';
export * from './ssh-pool.ts';
export * from './gpu-bus-id.ts';
export * from './kernel-log.ts';
export * from './smi-health.ts';
export * from './gpu-watch-script.ts';
export * from './gpu-diagnostic.ts';
