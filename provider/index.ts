// The declarative layer's public surface: constructs for stacks, and the engine the CLI drives. The
// CLI loads it, and so cdktf, only when a stack command runs (cli/stack-commands.ts imports it
// dynamically); `gpufleet --help` and the API client commands never load it
// (test/architecture/cli-start.test.ts).
// cdktf's App, so a stack outside this repository uses the very cdktf copy the constructs were built with
export { App } from 'cdktf';
export { GpufleetStack } from './constructs/stack.ts';
export {
  Pod,
  NetworkVolume,
  Template,
  ServerlessEndpoint,
  RegistryRef,
  type PodProps,
  type NetworkVolumeProps,
  type TemplateProps,
  type ServerlessEndpointProps,
  type RegistryRefProps,
} from './constructs/resources.ts';
export { GpufleetResource } from './constructs/gpufleet-resource.ts';
export type { ResourceKind } from './contract/triggers.ts';
export { synthApp, readSynthDir, readTfJson, type DesiredStack, type DesiredResource } from './engine/synth.ts';
export { makePlan, runApply, runDestroy, runWatch, type RunOptions, type RunResult } from './engine/run.ts';
export { planStack, hasChanges, type Plan, type PlannedChange } from './engine/plan.ts';
export { formatPlan, planJson } from './engine/plan-format.ts';
export { importResource } from './engine/import.ts';
export { readLiveState } from './engine/live-state.ts';
export * from './engine/api-retry.ts';
export * from './engine/import.ts';
export * from './engine/lock.ts';
export * from './engine/plan-format.ts';
export * from './engine/plan.ts';
export * from './engine/reporter.ts';
export * from './engine/run.ts';
export * from './engine/synth.ts';
