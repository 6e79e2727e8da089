// SDL of templates and serverless endpoints (saveTemplate, saveEndpoint and what they return); the
// root Query/Mutation fields that use these types are in schema.ts.
export const templateAndEndpointTypes = /* GraphQL */ `
# ---- templates ----------------------------------------------------------------------------------

type PodTemplate {
  id: String!
  name: String!
  imageName: String!
  dockerArgs: String!
  containerDiskInGb: Int!
  volumeInGb: Int!
  volumeMountPath: String
  ports: String!
  portsConfig: [PortConfig!]!
  env: [EnvironmentVariable!]!
  containerRegistryAuthId: String
  isServerless: Boolean!
  isPublic: Boolean!
  isRunpod: Boolean!
  category: String
  readme: String!
  startSsh: Boolean!
  startJupyter: Boolean!
  startScript: String
  advancedStart: Boolean!
}

type PortConfig {
  port: String!
  name: String!
}

input PortConfigInput {
  port: String
  name: String
}

input PodTemplateInput {
  isRunpod: Boolean
  isServerless: Boolean
  isPublic: Boolean
}

input SaveTemplateInput {
  id: String
  name: String
  imageName: String
  dockerArgs: String
  containerDiskInGb: Int
  volumeInGb: Int
  volumeMountPath: String
  ports: String
  portsConfig: [PortConfigInput]
  env: [EnvironmentVariableInput]
  containerRegistryAuthId: String
  isServerless: Boolean
  isPublic: Boolean
  readme: String
  category: String
  startSsh: Boolean
  startJupyter: Boolean
  startScript: String
  advancedStart: Boolean
  config: String
}

# ---- endpoints ----------------------------------------------------------------------------------

type Endpoint {
  id: String!
  name: String!
  type: String!
  computeType: String!
  userId: String!
  templateId: String!
  template: PodTemplate
  "pool ids (or type ids) as they were given, comma-separated"
  gpuIds: String!
  gpuCount: Int!
  instanceIds: [String!]!
  workersMin: Int!
  workersMax: Int!
  workersStandby: Int!
  idleTimeout: Int!
  scalerType: String!
  scalerValue: Int!
  networkVolumeId: String
  networkVolume: NetworkVolume
  networkVolumeIds: [EndpointNetworkVolume!]!
  locations: String
  allowedCudaVersions: String
  minCudaVersion: String
  flashBootType: FlashBootType
  executionTimeoutMs: Int
  modelReferences: [String!]!
  env: [EnvironmentVariable!]!
  aiKey: String
  version: Int!
  createdAt: String!
}

type EndpointNetworkVolume {
  networkVolumeId: String!
  dataCenterId: String
}

input EndpointNetworkVolumeInput {
  networkVolumeId: String
  dataCenterId: String
}

input EndpointTemplateInput {
  name: String
  imageName: String
  containerDiskInGb: Int
  dockerArgs: String
  env: [EnvironmentVariableInput]
}

input EndpointInput {
  id: String
  name: String
  templateId: String
  template: EndpointTemplateInput
  hubReleaseId: String
  gpuIds: String
  gpuCount: Int
  instanceIds: [String]
  computeType: String
  type: String
  workersMin: Int
  workersMax: Int
  idleTimeout: Int
  scalerType: String
  scalerValue: Int
  networkVolumeId: String
  networkVolumeIds: [EndpointNetworkVolumeInput]
  locations: String
  allowedCudaVersions: String
  minCudaVersion: String
  flashBootType: FlashBootType
  flashboot: Boolean
  executionTimeoutMs: Int
  modelReferences: [String]
  env: [EnvironmentVariableInput]
}

input UpdateEndpointTemplateInput {
  endpointId: String
  "older runpod-python releases send the endpoint id as id"
  id: String
  templateId: String
}
`;
