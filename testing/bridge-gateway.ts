// The address of the host on docker's default bridge (docker0), which every container reaches as
// `host.docker.internal`: a control plane that serverless workers on test hosts call listens there.
// Found the way the product points containers at the host (provisioner/container-spec.ts,
// `--add-host=host.docker.internal:host-gateway`): a Docker engine started for the first time records
// no `Gateway` in the bridge network's IPAM config (it appears after a restart), so when the config
// has none, the engine itself is asked what `host-gateway` means, from inside a container.
import { runDocker } from './docker.ts';
import { ensureTestImage, TEST_IMAGE } from './test-image.ts';

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const PROBE_NAME = 'gpufleet-gateway-probe';
const found = new Map<string, Promise<string>>();

export interface EngineAccess {
  /** env for the docker CLI (DOCKER_HOST) when the engine is not this machine's default */
  env?: NodeJS.ProcessEnv;
  /** an image the engine already holds, with `cat`; default: the test image, built when missing (default engine only) */
  image?: string;
}

/** The engine's default-bridge gateway address (IPv4); asked once per engine and process. */
export function dockerBridgeGateway(engine: EngineAccess = {}): Promise<string> {
  const key = engine.env?.DOCKER_HOST ?? process.env.DOCKER_HOST ?? '';
  let p = found.get(key);
  if (!p) {
    p = findGateway(engine).catch((e: unknown) => {
      found.delete(key);
      throw e;
    });
    found.set(key, p);
  }
  return p;
}

/** What the bridge network's IPAM config records (nothing on a first-start engine). */
export async function recordedBridgeGateway(engine: EngineAccess = {}): Promise<string | null> {
  const { stdout } = await runDocker(['network', 'inspect', 'bridge', '--format', '{{range .IPAM.Config}}{{.Gateway}} {{end}}'], { env: engine.env });
  return stdout.trim().split(/\s+/).find((a) => IPV4.test(a)) ?? null;
}

async function findGateway(engine: EngineAccess): Promise<string> {
  const recorded = await recordedBridgeGateway(engine);
  if (recorded) return recorded;
  const image = engine.image ?? (engine.env ? TEST_IMAGE : await ensureTestImage());
  const { stdout } = await runDocker(
    ['run', '--rm', '--network=bridge', `--add-host=${PROBE_NAME}:host-gateway`, '--entrypoint=cat', image, '/etc/hosts'],
    { env: engine.env, timeoutMs: 60_000 },
  );
  const line = stdout.split('\n').find((l) => l.trim().split(/\s+/).includes(PROBE_NAME));
  const ip = line?.trim().split(/\s+/)[0];
  if (!ip || !IPV4.test(ip)) throw new Error(`docker did not resolve host-gateway to an IPv4 address; the container's /etc/hosts:\n${stdout}`);
  return ip;
}
