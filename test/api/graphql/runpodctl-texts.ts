// The GraphQL documents runpodctl sends (design/runpod-compat.md §1.3): always `{"query", "variables"}`,
// values passed as variables. runpodctl (Go) cannot be installed here, so these are its texts copied
// verbatim (whitespace included) from github.com/runpod/runpodctl; each names its file, function and
// the line the Go raw string starts on. Commits: 2e2df89 (main, 2026-07-23) unless stated;
// a6fd9e0 (branch justinlin/con-683-685-runpodctl-agent-output, 2026-07-15).

/** api/pod.go:174 CreatePod. */
export const CREATE_POD_LEGACY = `
		mutation createPod($input: PodFindAndDeployOnDemandInput!) {
			podFindAndDeployOnDemand(input: $input) {
			  id
			  costPerHr
			  desiredStatus
			  lastStatusChange
			}
		}
		`;

/** internal/api/graphql.go:323 CreatePod. */
export const CREATE_POD = `
		mutation createPod($input: PodFindAndDeployOnDemandInput!) {
			podFindAndDeployOnDemand(input: $input) {
				id
				name
				imageName
				desiredStatus
				costPerHr
				containerDiskInGb
				volumeInGb
				volumeMountPath
				gpuCount
				memoryInGb
				vcpuCount
				ports
				lastStatusChange
				env
				machine {
					gpuDisplayName
					location
				}
			}
		}
		`;

/** api/pod.go:224 StopPod. */
export const STOP_POD = `
		mutation stopPod($podId: String!) {
		  podStop(input: {podId:  $podId}) {
			id
			desiredStatus
			lastStatusChange
		  }
		}
		`;

/** api/pod.go:273 RemovePod. */
export const TERMINATE_POD = `
		mutation terminatePod($podId: String!) {
		  podTerminate(input: {podId:  $podId})
		}
		`;

/** api/pod.go:314 StartOnDemandPod. */
export const RESUME_POD = `
		mutation podResume($podId: String!) {
		  podResume(input: {podId: $podId}) {
			id
			costPerHr
			desiredStatus
			lastStatusChange
		  }
		}
		`;

/** api/pod.go:364 StartSpotPod. */
export const BID_RESUME_POD = `
		mutation Mutation($podId: String!, $bidPerGpu: Float!, $gpuCount: Int!) {
			podBidResume(input: {podId: $podId, bidPerGpu: $bidPerGpu, gpuCount: $gpuCount}) {
			  id
			  costPerHr
			  desiredStatus
			  lastStatusChange
			}
		}
		`;

/** api/pod.go:70 GetPods. Verbatim: the former fixture listed `runtime` before `machine`; the source never did. */
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
				machine {
				  gpuDisplayName
				  location
				}
				runtime {
				  ports	{
					ip
					isIpPublic
					privatePort
					publicPort
					PortType: type
				  }
				}
			  }
			}
		  }
		`;

/** internal/api/gpu.go:88 ListGpuTypes @ a6fd9e0. Only on branch justinlin/con-683-685-runpodctl-agent-output (main at 2e2df89 selects neither price). */
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

/** internal/api/gpu.go:268 ListDataCenters. */
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

/** internal/api/gpu.go:179 ListServerlessGpuPools. */
export const LIST_SERVERLESS_GPU_POOLS = `
		query {
			serverlessGpuPools {
				id
				gpuTypeIds
			}
		}
	`;

/** api/cloud.go:20 GetCloud. */
export const LOWEST_PRICE = `
		query LowestPrice($input: GpuLowestPriceInput!) {
			gpuTypes {
			  lowestPrice(input: $input) {
				gpuName
				gpuTypeId
				minimumBidPrice
				uninterruptablePrice
				minMemory
				minVcpu
			  }
			}
		}
		`;

/** internal/api/gpu.go:310 GetUser. */
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

/** api/user.go:21 GetPublicSSHKeys; the same document (whitespace aside) in internal/api/graphql.go:109 GetPublicSSHKeys. */
export const GET_PUBLIC_SSH_KEYS = `
		query myself {
			myself {
				id
				pubKey
			}
		}
		`;

/** api/user.go:104 AddPublicSSHKey; the same document (whitespace aside) in internal/api/graphql.go:189 AddPublicSSHKey; the same document (whitespace aside) in internal/api/graphql.go:249 RemovePublicSSHKey. */
export const UPDATE_USER_SETTINGS = `
		mutation Mutation($input: UpdateUserSettingsInput) {
			updateUserSettings(input: $input) {
			  id
			}
		  }
		`;

/** api/volume.go:19 GetNetworkVolumes; the same document (whitespace aside) in internal/api/graphql.go:503 GetNetworkVolumes. */
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

/** api/endpoint.go:62 CreateTemplate. */
export const SAVE_TEMPLATE = `
		mutation saveTemplate($input: SaveTemplateInput) {
			saveTemplate(input: $input) {
			  advancedStart
			  containerDiskInGb
			  dockerArgs
			  env {
				key
				value
			  }
			  id
			  imageName
			  name
			  ports
			  readme
			  startJupyter
			  startScript
			  startSsh
			  volumeInGb
			  volumeMountPath
			}
		  }
		`;

/** api/endpoint.go:126 CreateEndpoint. */
export const SAVE_ENDPOINT_LEGACY = `
		mutation saveEndpoint($input: EndpointInput!) {
			saveEndpoint(input: $input) {
			  gpuIds
			  id
			  idleTimeout
			  locations
			  name
			  networkVolumeId
			  scalerType
			  scalerValue
			  templateId
			  userId
			  workersMax
			  workersMin
			}
		  }
		`;

/** internal/api/endpoints.go:333 CreateEndpointGQL. */
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

/** api/endpoint.go:185 UpdateEndpointTemplate; the same document (whitespace aside) in internal/api/endpoints.go:147 UpdateEndpointTemplate. */
export const UPDATE_ENDPOINT_TEMPLATE = `
		mutation Mutation($input: UpdateEndpointTemplateInput) {
			updateEndpointTemplate(input: $input) {
			  id
			  templateId
			}
		  }
		`;

/** internal/api/templates.go:170 ListAllTemplates. */
export const POD_TEMPLATES = `
		query PodTemplates($input: PodTemplateInput) {
			podTemplates(input: $input) {
				id
				name
				imageName
				isServerless
				isPublic
				isRunpod
				category
				containerDiskInGb
				volumeInGb
				volumeMountPath
			}
		}
	`;

/** internal/api/templates.go:295 getTemplateByIDGraphQL. */
export const GET_TEMPLATE = `
		query GetTemplate($id: String!) {
			podTemplate(id: $id) {
				id
				name
				imageName
				isServerless
				isPublic
				isRunpod
				category
				ports
				portsConfig {
					port
					name
				}
				env {
					key
					value
				}
				containerDiskInGb
				containerRegistryAuthId
				volumeInGb
				volumeMountPath
				readme
			}
		}
	`;
