// The contract between the constructs and the engine: the keys of a null_resource's `triggers`.
// Kept apart from the constructs so the CLI reads synth output without loading cdktf.
export type ResourceKind = 'pod' | 'network-volume' | 'template' | 'endpoint' | 'registry-ref';

export const RESOURCE_KINDS: readonly ResourceKind[] = ['pod', 'network-volume', 'template', 'endpoint', 'registry-ref'];

export const TRIGGER = { kind: 'gpufleet_kind', path: 'gpufleet_path', spec: 'gpufleet_spec', hash: 'gpufleet_hash' } as const;
