// The GraphQL schema (SDL) that unmodified public clients query: type and input names, field names
// and nullability follow what runpod-python and runpodctl send and read (design/runpod-compat.md §1).
// Inputs accept every field those clients emit; fields this fleet has no use for are accepted and
// ignored (docs/graphql.md lists them). Every `input` argument is nullable because clients declare
// their variables as nullable (`$input: SaveTemplateInput`); resolvers reject a missing one.
// Template and endpoint types are in schema-serverless.ts.
import { templateAndEndpointTypes } from './schema-serverless.ts';

/** the fields every pod create takes (GPU on demand, interruptible, CPU), written once */
const podInputFields = /* GraphQL */ `
  name: String
  imageName: String
  cloudType: CloudTypeEnum
  containerDiskInGb: Int
  volumeInGb: Int
  volumeMountPath: String
  networkVolumeId: String
  templateId: String
  dockerArgs: String
  ports: String
  env: [EnvironmentVariableInput]
  dataCenterId: String
  containerRegistryAuthId: String
  globalNetwork: Boolean
  startSsh: Boolean
  startJupyter: Boolean
  supportPublicIp: Boolean
  countryCode: String
  minDownload: Int
  minUpload: Int
  minDisk: Int
  deployCost: Float
  volumeKey: String
  stopAfter: String
  terminateAfter: String
  compliance: [String]`;

/** the fields both GPU pod creates take (on-demand and interruptible) */
const gpuPodInputFields = /* GraphQL */ `
${podInputFields}
  gpuTypeId: String
  gpuCount: Int
  minVcpuCount: Int
  minMemoryInGb: Int
  allowedCudaVersions: [String]
  minCudaVersion: String
  port: Int
  aiApiId: String`;

const core = /* GraphQL */ `
"FLASHBOOT or OFF; accepted both as an enum literal (runpod-python) and as a string (runpodctl)"
scalar FlashBootType

enum CloudTypeEnum {
  ALL
  SECURE
  COMMUNITY
}

type Query {
  myself: User!
  pod(input: PodFilter): Pod
  gpuTypes(input: GpuTypeFilter): [GpuType!]!
  dataCenters: [DataCenter!]!
  serverlessGpuPools: [ServerlessGpuPool!]!
  cpuFlavors: [CpuFlavor!]!
  podTemplates(input: PodTemplateInput): [PodTemplate!]!
  podTemplate(id: String!): PodTemplate
}

type Mutation {
  podFindAndDeployOnDemand(input: PodFindAndDeployOnDemandInput): Pod
  "an interruptible (spot) pod at a bid (docs/teams.md)"
  podRentInterruptable(input: PodRentInterruptableInput): Pod
  deployCpuPod(input: DeployCpuPodInput): Pod
  podResume(input: PodResumeInput): Pod
  podBidResume(input: PodBidResumeInput): Pod
  podStop(input: PodStopInput): Pod
  "always null; an unknown pod is an error"
  podTerminate(input: PodTerminateInput): Boolean
  saveTemplate(input: SaveTemplateInput): PodTemplate
  deleteTemplate(templateName: String, templateId: String): Boolean
  saveEndpoint(input: EndpointInput): Endpoint
  updateEndpointTemplate(input: UpdateEndpointTemplateInput): Endpoint
  deleteEndpoint(id: String!): Boolean
  saveRegistryAuth(input: SaveRegistryAuthInput): ContainerRegistryAuth
  updateRegistryAuth(input: UpdateRegistryAuthInput): ContainerRegistryAuth
  deleteRegistryAuth(registryAuthId: String!): Boolean
  updateUserSettings(input: UpdateUserSettingsInput): User
}

# ---- user ---------------------------------------------------------------------------------------

type User {
  id: String!
  email: String
  pubKey: String
  clientBalance: Float
  currentSpendPerHr: Float
  spendLimit: Float
  notifyPodsStale: Boolean
  notifyPodsGeneral: Boolean
  notifyLowBalance: Boolean
  pods: [Pod!]!
  networkVolumes: [NetworkVolume!]!
  endpoints: [Endpoint!]!
  podTemplates: [PodTemplate!]!
  containerRegistryCreds: [ContainerRegistryAuth!]!
}

input UpdateUserSettingsInput {
  pubKey: String
}

type NetworkVolume {
  id: String!
  name: String!
  size: Int!
  dataCenterId: String!
}

type ContainerRegistryAuth {
  id: String!
  name: String!
  username: String
}

input SaveRegistryAuthInput {
  name: String
  username: String
  password: String
}

input UpdateRegistryAuthInput {
  id: String
  username: String
  password: String
}

# ---- pods ---------------------------------------------------------------------------------------

type Pod {
  id: String!
  name: String!
  imageName: String!
  dockerArgs: String!
  dockerId: String
  env: [String!]!
  gpuCount: Int!
  vcpuCount: Int!
  memoryInGb: Int!
  containerDiskInGb: Int!
  volumeInGb: Int!
  volumeMountPath: String
  networkVolumeId: String
  templateId: String
  containerRegistryAuthId: String
  costPerHr: Float!
  adjustedCostPerHr: Float!
  desiredStatus: String!
  lastStatusChange: String
  machineId: String
  "INTERRUPTABLE (a spot pod, preempted by on-demand pods and higher bids) or RESERVED (on-demand)"
  podType: String!
  "USD per GPU-hour an interruptible pod bids; null for on-demand pods"
  bidPerGpu: Float
  cloudType: CloudTypeEnum!
  dataCenterId: String
  locked: Boolean!
  port: Int
  ports: String!
  uptimeSeconds: Int!
  createdAt: String!
  runtime: PodRuntime
  machine: PodMachine
}

type PodRuntime {
  uptimeInSeconds: Int!
  ports: [PodRuntimePort!]!
  gpus: [PodRuntimeGpu!]!
  container: PodRuntimeContainer!
}

type PodRuntimePort {
  ip: String
  isIpPublic: Boolean!
  privatePort: Int!
  publicPort: Int
  type: String!
}

type PodRuntimeGpu {
  id: String!
  gpuUtilPercent: Int!
  memoryUtilPercent: Int!
}

type PodRuntimeContainer {
  cpuPercent: Int!
  memoryPercent: Int!
}

type PodMachine {
  podHostId: String!
  gpuDisplayName: String
  gpuTypeId: String
  location: String
  dataCenterId: String
  secureCloud: Boolean
  cudaVersion: String
  gpuAvailable: Int
  maintenanceStart: String
  maintenanceEnd: String
  maintenanceNote: String
}

input PodFilter {
  podId: String!
}

input EnvironmentVariableInput {
  key: String!
  value: String
}

type EnvironmentVariable {
  key: String!
  value: String!
}

input PodFindAndDeployOnDemandInput {
${gpuPodInputFields}
  "accepted and ignored on demand"
  bidPerGpu: Float
}

"every field of the on-demand create, the bid required (SkyPilot's sky/provision/runpod/api/pods.py sends them)"
input PodRentInterruptableInput {
${gpuPodInputFields}
  bidPerGpu: Float!
  "a minimum CUDA version where allowedCudaVersions is not given"
  cudaVersion: String
}

input DeployCpuPodInput {
${podInputFields}
  instanceId: String
}

input PodResumeInput {
  podId: String!
  gpuCount: Int
  allowedCudaVersions: [String]
  syncMachine: Boolean
}

input PodBidResumeInput {
  podId: String!
  bidPerGpu: Float
  gpuCount: Int
}

input PodStopInput {
  podId: String!
  incrementVersion: Boolean
}

input PodTerminateInput {
  podId: String!
}

# ---- catalog ------------------------------------------------------------------------------------

input GpuTypeFilter {
  id: String
  ids: [String!]
}

type GpuType {
  id: String!
  displayName: String!
  manufacturer: String!
  memoryInGb: Int!
  cudaCores: Int
  "serverless pool this type belongs to (null for cards under 16 GB)"
  pool: String
  secureCloud: Boolean!
  communityCloud: Boolean!
  maxGpuCount: Int!
  maxGpuCountSecureCloud: Int!
  maxGpuCountCommunityCloud: Int!
  securePrice: Float
  communityPrice: Float
  oneWeekPrice: Float
  oneMonthPrice: Float
  threeMonthPrice: Float
  sixMonthPrice: Float
  secureSpotPrice: Float
  communitySpotPrice: Float
  lowestPrice(input: GpuLowestPriceInput): LowestPrice!
}

input GpuLowestPriceInput {
  gpuCount: Int
  secureCloud: Boolean
  dataCenterId: String
  minMemoryInGb: Int
  minVcpuCount: Int
  totalDisk: Int
  minDisk: Int
  minDownload: Int
  minUpload: Int
  supportPublicIp: Boolean
  countryCode: String
  allowedCudaVersions: [String]
  compliance: [String]
  globalNetwork: Boolean
  includeAiApi: Boolean
}

type LowestPrice {
  gpuTypeId: String!
  gpuName: String!
  "USD per GPU-hour in the cheapest tier that satisfies the input; null when no host offers it"
  uninterruptablePrice: Float
  "the lowest bid (USD per GPU-hour) that places such a pod now: the spot floor while a GPU is free, else just above the bids it would preempt; null when none would place"
  minimumBidPrice: Float
  stockStatus: String!
  availableGpuCounts: [Int!]!
  maxUnreservedGpuCount: Int!
  minMemory: Int
  minVcpu: Int
  countryCode: String
}

type DataCenter {
  id: String!
  name: String!
  location: String!
  listed: Boolean!
  storageSupport: Boolean!
  globalNetwork: Boolean!
  gpuAvailability: [GpuAvailability!]!
}

type GpuAvailability {
  gpuTypeId: String!
  displayName: String!
  stockStatus: String!
  free: Int!
}

type ServerlessGpuPool {
  id: String!
  gpuTypeIds: [String!]!
  memoryInGb: Int!
}

type CpuFlavor {
  id: String!
  groupId: String!
  displayName: String!
  minVcpu: Int!
  maxVcpu: Int!
  vcpuCounts: [Int!]!
  ramMultiplier: Int!
  pricePerVcpuHour: Float!
}
`;

export const typeDefs = [core, templateAndEndpointTypes].join('\n');
