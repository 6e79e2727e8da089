// Test harness: gpufleet/testing (testing/: the control plane, real sshd test hosts with fixture GPUs,
// the busybox test image, Docker engine access), and what only gpufleet's own suite uses.
export * from '../../testing/index.ts';
export { startPrivateRegistry, type PrivateRegistry } from './private-registry.ts';
export { startNetnsFleet, type NetnsFleet, type FleetHost, type FleetHostSpec, type ForwardPolicy } from './netns-fleet.ts';
