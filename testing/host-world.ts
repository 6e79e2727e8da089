// A real sshd test host enrolled with a control plane, and the teardown of all of it: the control
// plane, the containers and networks it made on the host, and the host.
import { removeContainersByLabel, removeNetworksByLabel } from './docker.ts';
import type { TestHost } from './test-host.ts';

/** a control plane, in process (TestControlPlane) or a child process (SpawnedControlPlane) */
type ControlPlaneLike = { url: string; adminKey: string };

/**
 * POST /v2/hosts with the admin key: the test host (root over SSH, its private key), in data center
 * `dataCenterId` when given, by `address` (a name that resolves to it) when given. Answers the host's id; throws unless the answer is 201.
 */
export async function enrolTestHost(cp: ControlPlaneLike, host: TestHost, opts: { dataCenterId?: string; address?: string } = {}): Promise<string> {
  const res = await fetch(`${cp.url}/v2/hosts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${cp.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      ssh: `root@${opts.address ?? host.address}:${host.port}`,
      privateKey: host.privateKey,
      ...(opts.dataCenterId !== undefined ? { dataCenterId: opts.dataCenterId } : {}),
    }),
  });
  const body = (await res.json()) as { id?: string };
  if (res.status !== 201) throw new Error(`enrolling test host ${host.name}: expected 201, got ${res.status}: ${JSON.stringify(body)}`);
  return body.id!;
}

export interface HostWorld {
  /** stopped first: close() in process, SIGTERM for a child process */
  cp?: { close(): Promise<void> } | { kill(signal?: NodeJS.Signals): Promise<void> } | null;
  host?: TestHost | null;
  /** the enrolled host's id ('' or absent: never enrolled) */
  hostId?: string;
}

/**
 * Stops the control plane, removes the containers and networks labelled with the host's id (errors
 * ignored), then disposes of the test host. Each part may be missing (a beforeAll that failed early).
 */
export async function disposeHostWorld({ cp, host, hostId }: HostWorld): Promise<void> {
  if (cp) await ('close' in cp ? cp.close() : cp.kill('SIGTERM'));
  if (hostId) {
    await removeContainersByLabel(`gpufleet.host=${hostId}`).catch(() => undefined);
    await removeNetworksByLabel(`gpufleet.host=${hostId}`).catch(() => undefined);
  }
  await host?.dispose();
}
