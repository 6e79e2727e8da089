// core/hosts: the fleet's hosts as the control plane manages them: host lifecycle (enrol, refresh,
// drain, remove), placement of pods on them (the Placer port and the fleet scheduler behind it), the
// GPU offers they make (types, stock, data centers) and their CUDA versions.
export { CUDA_VERSION, cudaVersionsAtLeast } from './cuda-versions.ts';
export { FleetPlacer, type PlanListener, REPLANS } from './fleet-placer.ts';
export { DEFAULT_DATA_CENTER, type EnrollInput, HostService, parseSshAddress, type Progress } from './host-service.ts';
export { type GpuTypeInfo, OfferService } from './offer-service.ts';
export { type Placement, type PodPlacementRequest, type Placer } from './placer.ts';
export { GpuHealthSignal, type GpuHealthListener, type GpuHealthSignalEvent } from './gpu-health-signal.ts';
export { type DiagnoseInput, type DiagnoseResult, GpuDiagnostics } from './gpu-diagnostics.ts';
export { GpuUsageHistory, usageOf } from './gpu-usage-history.ts';
