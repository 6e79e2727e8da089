// gpufleet/testing: a gpufleet on this machine for tests of what runs on it (workers, stacks, scripts
// against the API), the way Temporal ships its test environment. docs/testing.md says what it needs
// (root, sshd, the Docker engine) and shows it used; gpufleet's own suite runs on it (test/harness/).
export { startTestFleet, type TestFleet, type TestFleetHost, type TestFleetOptions } from './test-fleet.ts';
export { startLocalControlPlane, TEST_ADMIN_KEY, type LocalControlPlane, type LocalControlPlaneOptions } from './control-plane.ts';
export {
  startTestHost,
  type TestHost,
  type StartTestHostOptions,
  type DockerRunGate,
  type DockerFaults,
  type DockerFaultOp,
  type GpuFixtures,
  type KernelLogSource,
} from './test-host.ts';
export { FIXTURE_GPUS, fixtureGpuUuid, nvidiaSmiScript, nvidiaSmiTable, type FixtureGpu } from './nvidia-smi-fixture.ts';
export { enrolTestHost, disposeHostWorld, type HostWorld } from './host-world.ts';
export { ensureTestImage, ensureAltTestImage, TEST_IMAGE, ALT_TEST_IMAGE } from './test-image.ts';
export { dockerBridgeGateway, recordedBridgeGateway, type EngineAccess } from './bridge-gateway.ts';
export {
  dockerAvailable,
  dockerInspect,
  importRootfs,
  listContainers,
  removeContainersByLabel,
  removeNetworksByLabel,
  runDocker,
  type ContainerInspect,
  type DockerResult,
} from './docker.ts';
