// The host side of the worker relay (docs/serverless.md, "Reaching the control plane"): Docker's own
// TCP proxy (`docker-proxy`, shipped with every Docker engine for published ports) listening on the
// default bridge's address, the one containers reach as `host.docker.internal` (Docker's
// `host-gateway`), forwarding each connection to the SSH remote forward on the host's 127.0.0.1.
// Nothing is installed and nothing outlives the SSH connection: the proxy is stopped when the script's
// stdin ends (the control plane closed the session, or the connection is gone), or when no heartbeat
// byte came on stdin for `heartbeatTimeoutS` (a half-open connection: the control plane is gone but
// sshd has not noticed, so stdin never ends; the control plane writes one every few seconds,
// provisioner/worker-relay.ts). The host's loopback is
// never opened to containers: the proxy is a process of the host that containers reach on the bridge.
//
// Lines on stdout: `gateway <ipv4>`, then docker-proxy's own start report on its fd 3 (`0` listening,
// `1` and the error otherwise), then `exit <code>` when the proxy ends. `error <why>` when it cannot start.

/** a port as the script takes it: a whole number in 1..65535 (from our own config, never a user's) */
function portNumber(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > 65_535) throw new Error(`worker relay: ${n} is not a TCP port`);
  return n;
}

export interface RelayScriptInput {
  /** where containers connect: the control plane's port, on the bridge address */
  listenPort: number;
  /** the SSH remote forward's port on the host's 127.0.0.1 */
  forwardPort: number;
  /** the proxy is stopped when nothing came on stdin for this long (seconds; default 30) */
  heartbeatTimeoutS?: number;
}

/** how long the host's side waits for the control plane's next heartbeat byte */
export const RELAY_HEARTBEAT_TIMEOUT_S = 30;

export function workerRelayScript(input: RelayScriptInput): string {
  const listen = portNumber(input.listenPort);
  const forward = portNumber(input.forwardPort);
  const hb = input.heartbeatTimeoutS ?? RELAY_HEARTBEAT_TIMEOUT_S;
  if (!Number.isInteger(hb) || hb < 1 || hb > 3600) throw new Error(`worker relay: ${hb} is not a heartbeat timeout in seconds`);
  return [
    'set -u',
    'PATH="$PATH:/usr/sbin:/sbin:/usr/libexec/docker:/usr/local/bin"',
    // the default bridge's address: its IPAM gateway, or (an engine started for the first time records none) the bridge device's address
    `gw=$(docker network inspect bridge --format '{{range .IPAM.Config}}{{.Gateway}} {{end}}' 2>/dev/null | tr ' ' '\\n' | grep -E '^[0-9]+(\\.[0-9]+){3}$' | head -n 1)`,
    'if [ -z "$gw" ]; then',
    `  dev=$(docker network inspect bridge --format '{{index .Options "com.docker.network.bridge.name"}}' 2>/dev/null)`,
    '  gw=$(ip -4 -o addr show dev "${dev:-docker0}" 2>/dev/null | sed -n \'s/.* inet \\([0-9.]*\\)\\/.*/\\1/p\' | head -n 1)',
    'fi',
    'if [ -z "$gw" ]; then echo "error the Docker default bridge has no IPv4 address"; exit 3; fi',
    'proxy=$(command -v docker-proxy || true)',
    'if [ -z "$proxy" ]; then echo "error docker-proxy (Docker\'s TCP proxy) is not on this host"; exit 3; fi',
    'echo "gateway $gw"',
    'exec 5<&0',
    `"$proxy" -proto tcp -host-ip "$gw" -host-port ${listen} -container-ip 127.0.0.1 -container-port ${forward} 3>&1 </dev/null >/dev/null 2>&1 &`,
    'pid=$!',
    // the session's end (EOF on stdin), or no heartbeat byte for ${hb} s, ends the proxy (POSIX sh:
    // no `read -t`; dd reads one byte, and timeout ends it when none comes)
    `( while [ "$(timeout ${hb} dd bs=1 count=1 2>/dev/null <&5 | wc -c)" -eq 1 ]; do :; done; kill "$pid" 2>/dev/null ) &`,
    'exec 5<&-',
    'wait "$pid"',
    'echo "exit $?"',
  ].join('\n');
}
