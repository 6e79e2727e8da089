// The load-balancing gateway's public surface (docs/gateway.md): a mount for the API's origin.
export { loadBalancerGateway, DEFAULT_HOLD_MS, DEFAULT_MAX_BODY_BYTES, DEFAULT_REQUEST_TIMEOUT_MS, type GatewayMount, type GatewayOptions } from './gateway.ts';
export { SshConnector, TcpConnector, containerRoute, type ContainerRef, type SshRoute, type WorkerConnector } from './connectors.ts';
export { podPortProxy, type PodPortOptions } from './pod-ports.ts';
export type { LbWorker } from './worker-table.ts';
export { workerPorts } from './worker-table.ts';
export { forward } from './forward.ts';
