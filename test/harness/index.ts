// Test harness: real sshd test hosts, a local busybox image and direct Docker engine access.
export { ensureTestImage, ensureAltTestImage, TEST_IMAGE, ALT_TEST_IMAGE } from './test-image.ts';
export { startTestHost, type TestHost, type StartTestHostOptions, type DockerRunGate, type DockerFaults, type DockerFaultOp } from './test-host.ts';
export { FIXTURE_GPUS, fixtureGpuUuid, nvidiaSmiScript, nvidiaSmiTable, type FixtureGpu } from './nvidia-smi-fixture.ts';
export {
  dockerAvailable,
  dockerInspect,
  listContainers,
  removeContainersByLabel,
  removeNetworksByLabel,
  runDocker,
  type ContainerInspect,
  type DockerResult,
} from './docker.ts';
export { dockerBridgeGateway, recordedBridgeGateway, type EngineAccess } from './bridge-gateway.ts';
export { startPrivateRegistry, type PrivateRegistry } from './private-registry.ts';
export { disposeHostWorld, enrolTestHost, type HostWorld } from './host-world.ts';
export { startNetnsFleet, type NetnsFleet, type FleetHost, type FleetHostSpec, type ForwardPolicy } from './netns-fleet.ts';
