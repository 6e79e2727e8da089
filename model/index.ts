// The public surface of model/: what other layers import. Four floors, lowest first: base/ (the error
// registry, canonical JSON), records/ (every stored record and its view), schemas/ (the JSON Schemas of
// request bodies), rules/ (validation against them, and the rules a schema cannot say).
export * from './base/canonical-json.ts';
export * from './base/errors.ts';
export * from './records/account.ts';
export * from './records/collections.ts';
export * from './records/event.ts';
export * from './records/host.ts';
export * from './records/job.ts';
export * from './records/network-volume.ts';
export * from './records/pod-state-machine.ts';
export * from './records/pod.ts';
export * from './records/private-images.ts';
export * from './records/resources.ts';
export * from './records/worker.ts';
export * from './records/rate-limit-quotas.ts';
export * from './schemas/account.ts';
export * from './schemas/billing.ts';
export * from './schemas/common.ts';
export * from './schemas/endpoint.ts';
export * from './schemas/host.ts';
export * from './schemas/job.ts';
export * from './schemas/endpoint-v2.ts';
export * from './schemas/input-type.ts';
export * from './schemas/network-volume.ts';
export * from './schemas/pod-view.ts';
export * from './schemas/pod.ts';
export * from './schemas/pod-exec.ts';
export * from './schemas/public-endpoint.ts';
export * from './schemas/registry.ts';
export * from './schemas/stack-lock.ts';
export * from './schemas/template.ts';
export * from './rules/network-address.ts';
export * from './rules/image-registry.ts';
export * from './rules/pod-validation.ts';
export * from './rules/resource-rules.ts';
export * from './rules/validation.ts';
