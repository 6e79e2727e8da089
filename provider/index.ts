// The declarative layer's public surface: constructs for stacks, and the engine the CLI drives.
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
export { GpufleetResource, type ResourceKind } from './constructs/gpufleet-resource.ts';
