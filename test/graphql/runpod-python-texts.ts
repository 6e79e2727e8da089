// The GraphQL texts runpod-python sends, ported character for character from its f-strings
// (runpod/api/queries/*.py, runpod/api/mutations/*.py; design/runpod-compat.md §1.2). The SDK
// inlines every value as a literal and sends `{"query": text}` with no variables.

export const QUERY_GPU_TYPES = `
query GpuTypes {
  gpuTypes {
    id
    displayName
    memoryInGb
  }
}
`;

export function generateGpuQuery(gpuId: string, gpuCount = 1): string {
  return `
    query GpuTypes {
      gpuTypes(input: {id: "${gpuId}"}) {
        maxGpuCount
        id
        displayName
        manufacturer
        memoryInGb
        cudaCores
        secureCloud
        communityCloud
        securePrice
        communityPrice
        oneMonthPrice
        threeMonthPrice
        oneWeekPrice
        communitySpotPrice
        secureSpotPrice
        lowestPrice(input: {gpuCount: ${gpuCount}}) {
          minimumBidPrice
          uninterruptablePrice
        }
      }
    }
    `;
}

/** The pod field set `F` of design/runpod-compat.md §1.2. */
const F = `id containerDiskInGb costPerHr desiredStatus dockerArgs dockerId env gpuCount imageName lastStatusChange
    machineId memoryInGb name podType port ports uptimeSeconds vcpuCount volumeInGb volumeMountPath
    runtime { ports { ip isIpPublic privatePort publicPort type } } machine { gpuDisplayName }`;

export const QUERY_MY_PODS = `query myPods { myself { pods { ${F} } } }`;
export const generatePodQuery = (podId: string) => `query pod { pod(input: {podId: "${podId}"}) { ${F} } }`;

/** The newer queries/pods.py text, whose machine selection adds the maintenance fields. */
export const QUERY_POD_NEWER = `
query myPods {
    myself {
        pods {
            id
            containerDiskInGb
            costPerHr
            desiredStatus
            dockerArgs
            dockerId
            env
            gpuCount
            imageName
            lastStatusChange
            machineId
            memoryInGb
            name
            podType
            port
            ports
            uptimeSeconds
            vcpuCount
            volumeInGb
            volumeMountPath
            runtime {
                ports{
                    ip
                    isIpPublic
                    privatePort
                    publicPort
                    type
                }
            }
            machine {
                gpuDisplayName
                gpuAvailable
                maintenanceStart
                maintenanceEnd
                maintenanceNote
            }
        }
    }
}
`;

export interface PodDeployArgs {
  name: string;
  imageName: string;
  gpuTypeId?: string;
  cloudType?: string;
  supportPublicIp?: boolean;
  startSsh?: boolean;
  dataCenterId?: string;
  countryCode?: string;
  gpuCount?: number;
  volumeInGb?: number;
  containerDiskInGb?: number;
  minVcpuCount?: number;
  minMemoryInGb?: number;
  dockerArgs?: string;
  ports?: string;
  volumeMountPath?: string;
  env?: Record<string, string>;
  templateId?: string;
  networkVolumeId?: string;
  allowedCudaVersions?: string[];
  minDownload?: number;
  minUpload?: number;
  instanceId?: string;
}

/** mutations/pods.py generate_pod_deployment_mutation: podFindAndDeployOnDemand, or deployCpuPod without a GPU type. */
export function generatePodDeploymentMutation(a: PodDeployArgs): string {
  const f: string[] = [`name: "${a.name}"`, `imageName: "${a.imageName}"`, `cloudType: ${a.cloudType ?? 'ALL'}`];
  if (a.startSsh ?? true) f.push('startSsh: true');
  let templateId = a.templateId;
  if (a.gpuTypeId !== undefined) {
    f.push(`gpuTypeId: "${a.gpuTypeId}"`);
    f.push(`supportPublicIp: ${String(a.supportPublicIp ?? true)}`);
    if (a.gpuCount !== undefined) f.push(`gpuCount: ${a.gpuCount}`);
    if (a.volumeInGb !== undefined) f.push(`volumeInGb: ${a.volumeInGb}`);
    if (a.minVcpuCount !== undefined) f.push(`minVcpuCount: ${a.minVcpuCount}`);
    if (a.minMemoryInGb !== undefined) f.push(`minMemoryInGb: ${a.minMemoryInGb}`);
    if (a.allowedCudaVersions !== undefined) f.push(`allowedCudaVersions: [${a.allowedCudaVersions.map((v) => `"${v}"`).join(', ')}]`);
  } else {
    if (a.instanceId !== undefined) f.push(`instanceId: "${a.instanceId}"`);
    templateId = templateId || 'runpod-ubuntu';
  }
  f.push(a.dataCenterId !== undefined ? `dataCenterId: "${a.dataCenterId}"` : 'dataCenterId: null');
  if (a.dockerArgs !== undefined) f.push(`dockerArgs: "${a.dockerArgs}"`);
  if (a.countryCode !== undefined) f.push(`countryCode: "${a.countryCode}"`);
  if (a.containerDiskInGb !== undefined) f.push(`containerDiskInGb: ${a.containerDiskInGb}`);
  if (a.ports !== undefined) f.push(`ports: "${a.ports.replace(/ /g, '')}"`);
  if (a.volumeMountPath !== undefined) f.push(`volumeMountPath: "${a.volumeMountPath}"`);
  if (a.env !== undefined) f.push(`env: [${Object.entries(a.env).map(([k, v]) => `{ key: "${k}", value: "${v}" }`).join(', ')}]`);
  if (templateId !== undefined) f.push(`templateId: "${templateId}"`);
  if (a.networkVolumeId !== undefined) f.push(`networkVolumeId: "${a.networkVolumeId}"`);
  if (a.minDownload !== undefined) f.push(`minDownload: ${a.minDownload}`);
  if (a.minUpload !== undefined) f.push(`minUpload: ${a.minUpload}`);
  const mutationType = a.gpuTypeId ? 'podFindAndDeployOnDemand' : 'deployCpuPod';
  return `
    mutation {
      ${mutationType}(
        input: {
          ${f.join(', ')}
        }
      ) {
        id
        imageName
        env
        machineId
        machine {
          podHostId
        }
      }
    }
    `;
}

export const generatePodStopMutation = (podId: string) => `
    mutation {
        podStop(input: { podId: "${podId}" }) {
            id
            desiredStatus
        }
    }
    `;

export const generatePodResumeMutation = (podId: string, gpuCount: number) => `
    mutation {
        podResume(input: { podId: "${podId}", gpuCount: ${gpuCount} }) {
            id
            desiredStatus
            imageName
            env
            machineId
            machine {
                podHostId
            }
        }
    }
    `;

export const generatePodTerminateMutation = (podId: string) => `
    mutation {
        podTerminate(input: { podId: "${podId}" })
    }
    `;

export const QUERY_USER = `
query myself {
    myself {
        id
        pubKey
        networkVolumes {
            id
            name
            size
            dataCenterId
        }
    }
}
`;

/** mutations/user.py: the key is interpolated as-is, so a Python caller's "\n" arrives as the two characters \ and n. */
export const generateUserMutation = (pubkey: string) => `
    mutation {
        updateUserSettings(
            input: {
                pubKey: "${pubkey}"
            }
        ) {
            id
            pubKey
        }
    }
    `;

export interface TemplateArgs {
  name: string;
  imageName: string;
  dockerStartCmd?: string;
  containerDiskInGb?: number;
  volumeInGb?: number;
  volumeMountPath?: string;
  ports?: string;
  env?: Record<string, string>;
  isServerless?: boolean;
  registryAuthId?: string;
}

/** mutations/templates.py generate_pod_template */
export function generatePodTemplate(a: TemplateArgs): string {
  const f = [`name: "${a.name}"`, `imageName: "${a.imageName}"`];
  f.push(a.dockerStartCmd !== undefined ? `dockerArgs: "${a.dockerStartCmd.replace(/"/g, '\\"')}"` : 'dockerArgs: ""');
  f.push(`containerDiskInGb: ${a.containerDiskInGb ?? 10}`);
  f.push(a.volumeInGb !== undefined ? `volumeInGb: ${a.volumeInGb}` : 'volumeInGb: 0');
  if (a.volumeMountPath !== undefined) f.push(`volumeMountPath: "${a.volumeMountPath}"`);
  f.push(a.ports !== undefined ? `ports: "${a.ports.replace(/ /g, '')}"` : 'ports: ""');
  f.push(a.env !== undefined ? `env: [${Object.entries(a.env).map(([k, v]) => `{ key: "${k}", value: "${v}" }`).join(', ')}]` : 'env: []');
  f.push(a.isServerless ? 'isServerless: true' : 'isServerless: false');
  f.push(a.registryAuthId !== undefined ? `containerRegistryAuthId : "${a.registryAuthId}"` : 'containerRegistryAuthId : ""');
  f.push('startSsh: true', 'isPublic: false', 'readme: ""');
  return `
    mutation {
        saveTemplate(
            input: {
                ${f.join(', ')}
            }
        ) {
            id
            name
            imageName
            dockerArgs
            containerDiskInGb
            volumeInGb
            volumeMountPath
            ports
            env {
                key
                value
            }
            isServerless
        }
    }
    `;
}

export interface EndpointArgs {
  name: string;
  templateId: string;
  gpuIds?: string;
  networkVolumeId?: string;
  locations?: string;
  idleTimeout?: number;
  scalerType?: string;
  scalerValue?: number;
  workersMin?: number;
  workersMax?: number;
  flashboot?: boolean;
  allowedCudaVersions?: string;
  gpuCount?: number;
}

/** mutations/endpoints.py generate_endpoint_mutation (with flashboot, allowedCudaVersions and gpuCount). */
export function generateEndpointMutation(a: EndpointArgs): string {
  const f: string[] = [];
  if (a.flashboot) f.push('flashBootType: FLASHBOOT');
  f.push(`name: "${a.name}"`, `templateId: "${a.templateId}"`, `gpuIds: "${a.gpuIds ?? 'AMPERE_16'}"`);
  f.push(a.networkVolumeId !== undefined ? `networkVolumeId: "${a.networkVolumeId}"` : 'networkVolumeId: ""');
  f.push(a.locations !== undefined ? `locations: "${a.locations}"` : 'locations: ""');
  f.push(`idleTimeout: ${a.idleTimeout ?? 5}`);
  f.push(`scalerType: "${a.scalerType ?? 'QUEUE_DELAY'}"`);
  f.push(`scalerValue: ${a.scalerValue ?? 4}`);
  f.push(`workersMin: ${a.workersMin ?? 0}`);
  f.push(`workersMax: ${a.workersMax ?? 3}`);
  if (a.allowedCudaVersions !== undefined) f.push(`allowedCudaVersions: "${a.allowedCudaVersions}"`);
  f.push(`gpuCount: ${a.gpuCount ?? 1}`);
  return `
    mutation {
        saveEndpoint(
            input: {
                ${f.join(', ')}
            }
        ) {
            id
            name
            templateId
            gpuIds
            networkVolumeId
            locations
            idleTimeout
            scalerType
            scalerValue
            workersMin
            workersMax
            allowedCudaVersions
            gpuCount
            flashBootType
        }
    }
    `;
}

export const QUERY_ENDPOINT = `
query Query {
  myself {
    endpoints {
      aiKey
      gpuIds
      id
      idleTimeout
      name
      networkVolumeId
      locations
      scalerType
      scalerValue
      templateId
      type
      userId
      version
      workersMax
      workersMin
      workersStandby
      gpuCount
      env {
        key
        value
      }
      createdAt
      networkVolume {
        id
        dataCenterId
      }
    }
  }
}
`;

export const updateEndpointTemplateMutation = (endpointId: string, templateId: string) => `
    mutation {
        updateEndpointTemplate(input: {templateId: "${templateId}", endpointId: "${endpointId}"}) {
            id
            templateId
        }
    }
    `;

/** mutations/container_register_auth.py */
export const generateContainerRegistryAuth = (name: string, username: string, password: string) => `
    mutation SaveRegistryAuth {
        saveRegistryAuth(input: {name: "${name}", username: "${username}", password: "${password}"}) {
            id
            name
        }
    }
    `;

export const updateContainerRegistryAuth = (id: string, username: string, password: string) => `
    mutation UpdateRegistryAuth {
        updateRegistryAuth(input: {id: "${id}", username: "${username}", password: "${password}"}) {
            id
            name
        }
    }
    `;

export const deleteContainerRegistryAuth = (id: string) => `
    mutation DeleteRegistryAuth {
        deleteRegistryAuth(registryAuthId: "${id}")
    }
    `;
