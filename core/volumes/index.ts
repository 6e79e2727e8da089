// core/volumes: network volumes.
export { dataCenterExists, NetworkVolumeService, toNetworkVolumeView } from './network-volume-service.ts';
