// The GraphQL document SkyPilot sends to create a spot pod (design/runpod-compat.md §5b), as its
// generator renders it: skypilot-org/skypilot, sky/provision/runpod/api/pods.py,
// generate_spot_pod_deployment_mutation (commit 34b4641c), sent through runpod-python's
// run_graphql_query as `{"query": text}`. SkyPilot writes every value into the text (no variables).
// The text below is that function's output, whitespace included, for
//   generate_spot_pod_deployment_mutation(name=<name>, image_name='busybox:1.36',
//     gpu_type_id='NVIDIA H100 80GB HBM3', bid_per_gpu=<bid>, volume_mount_path='/workspace',
//     cloud_type='SECURE', gpu_count=1, container_disk_in_gb=10, ports='22/tcp',
//     data_center_id='dc-spot', env={'K': 'V'})
// with its defaults start_ssh=True and support_public_ip=True; only <name> and <bid> vary here.

/** SkyPilot's podRentInterruptable text for one spot pod; `bid` prints as Python prints a float (1.6, 1.61). */
export function skypilotSpotPod(name: string, bid: number): string {
  const input = `name: "${name}", imageName: "busybox:1.36", gpuTypeId: "NVIDIA H100 80GB HBM3", bidPerGpu: ${bid}, volumeMountPath: "/workspace", cloudType: SECURE, startSsh: true, supportPublicIp: true, gpuCount: 1, containerDiskInGb: 10, ports: "22/tcp", dataCenterId: "dc-spot", env: [{ key: "K", value: "V" }]`;
  return `
    mutation {
      podRentInterruptable(
        input: {
          ${input}
        }
      ) {
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
}
