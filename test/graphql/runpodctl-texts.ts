// The GraphQL documents runpodctl sends (design/runpod-compat.md §1.3): always `{"query", "variables"}`,
// values passed as variables. Texts copied from runpodctl's api/*.go and internal/api/*.go.

/** legacy api/pod.go CreatePod */
export const CREATE_POD_LEGACY = `mutation createPod($input: PodFindAndDeployOnDemandInput!) { podFindAndDeployOnDemand(input: $input) { id costPerHr desiredStatus lastStatusChange } }`;

/** internal/api/graphql.go CreatePod */
export const CREATE_POD = `
  mutation createPod($input: PodFindAndDeployOnDemandInput!) { podFindAndDeployOnDemand(input: $input) {
    id name imageName desiredStatus costPerHr containerDiskInGb volumeInGb volumeMountPath gpuCount memoryInGb vcpuCount
    ports lastStatusChange env machine { gpuDisplayName location } } }`;

export const STOP_POD = `mutation stopPod($podId: String!) { podStop(input: {podId: $podId}) { id desiredStatus lastStatusChange } }`;
export const TERMINATE_POD = `mutation terminatePod($podId: String!) { podTerminate(input: {podId: $podId}) }`;
export const RESUME_POD = `mutation podResume($podId: String!) { podResume(input: {podId: $podId}) { id costPerHr desiredStatus lastStatusChange } }`;
export const BID_RESUME_POD = `mutation Mutation($podId: String!, $bidPerGpu: Float!, $gpuCount: Int!) { podBidResume(input: {podId: $podId, bidPerGpu: $bidPerGpu, gpuCount: $gpuCount}) { id costPerHr desiredStatus lastStatusChange } }`;

/** legacy api/pod.go GetPods: python's field set plus machine.location and the `PortType: type` alias */
export const GET_PODS_LEGACY = `
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
				  ports {
					ip
					isIpPublic
					privatePort
					publicPort
					PortType: type
				  }
				}
				machine {
				  gpuDisplayName
				  location
				}
			  }
			}
		}
		`;

/** internal/api/gpu.go ListGpuTypes and ListDataCenters */
export const LIST_GPU_TYPES = `
		query {
			gpuTypes {
				id
				displayName
				memoryInGb
				secureCloud
				communityCloud
				securePrice
				communityPrice
			}
		}
	`;

export const LIST_DATA_CENTERS = `
		query {
			dataCenters {
				id
				name
				location
				gpuAvailability {
					gpuTypeId
					displayName
					stockStatus
				}
			}
		}
	`;

export const LIST_SERVERLESS_GPU_POOLS = `
		query {
			serverlessGpuPools {
				id
				gpuTypeIds
			}
		}
	`;

/** legacy api/cloud.go GetCloud */
export const LOWEST_PRICE = `query LowestPrice($input: GpuLowestPriceInput!) { gpuTypes { lowestPrice(input: $input) { gpuName gpuTypeId minimumBidPrice uninterruptablePrice minMemory minVcpu } } }`;

/** internal/api/gpu.go GetUser */
export const GET_USER = `
		query {
			myself {
				id
				email
				clientBalance
				currentSpendPerHr
				spendLimit
				notifyPodsStale
				notifyPodsGeneral
				notifyLowBalance
			}
		}
	`;

export const GET_PUBLIC_SSH_KEYS = `
		query myself {
			myself {
				id
				pubKey
			}
		}
		`;

export const UPDATE_USER_SETTINGS = `
		mutation Mutation($input: UpdateUserSettingsInput) {
			updateUserSettings(input: $input) {
			  id
			}
		  }
		`;

export const GET_NETWORK_VOLUMES = `
		query getNetworkVolumes {
			myself {
			  networkVolumes {
				dataCenterId
				id
				name
				size
			  }
			}
		}
		`;

/** legacy api/endpoint.go */
export const SAVE_TEMPLATE = `mutation saveTemplate($input: SaveTemplateInput) { saveTemplate(input: $input) { advancedStart containerDiskInGb dockerArgs env{key value} id imageName name ports readme startJupyter startScript startSsh volumeInGb volumeMountPath } }`;
export const SAVE_ENDPOINT_LEGACY = `mutation saveEndpoint($input: EndpointInput!) { saveEndpoint(input:$input){ gpuIds id idleTimeout locations name networkVolumeId scalerType scalerValue templateId userId workersMax workersMin } }`;

/** internal/api/endpoints.go CreateEndpointGQL */
export const SAVE_ENDPOINT = `
		mutation SaveEndpoint($input: EndpointInput!) {
			saveEndpoint(input: $input) {
				id
				name
				templateId
				gpuIds
				instanceIds
				computeType
				networkVolumeId
				networkVolumeIds {
					networkVolumeId
					dataCenterId
				}
				locations
				idleTimeout
				scalerType
				scalerValue
				workersMin
				workersMax
				gpuCount
				minCudaVersion
				executionTimeoutMs
				flashBootType
				modelReferences
			}
		}
	`;

export const UPDATE_ENDPOINT_TEMPLATE = `
		mutation Mutation($input: UpdateEndpointTemplateInput) {
			updateEndpointTemplate(input:$input) {
			  id
			  templateId
			}
		  }
	`;

export const POD_TEMPLATES = `query PodTemplates($input: PodTemplateInput) { podTemplates(input:$input) { id name imageName isServerless isPublic isRunpod category containerDiskInGb volumeInGb volumeMountPath } }`;
export const GET_TEMPLATE = `query GetTemplate($id: String!) { podTemplate(id:$id) { id name imageName isServerless isPublic isRunpod category ports portsConfig{port name} env{key value} containerDiskInGb containerRegistryAuthId volumeInGb volumeMountPath readme } }`;
