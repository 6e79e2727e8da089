#!/usr/bin/env bash
# Prepares a CI / dev machine (Debian 12, root) to act as gpufleet test hosts:
#   - installs docker.io, openssh-server, busybox-static, iproute2 (+ jq for the JSON merge), dnsmasq-base, iperf3,
#     wireguard-go and wireguard-tools
#   - installs docker-registry and apache2-utils (htpasswd) for the private-registry tests (not started)
#   - installs the python3 packages runpod-python needs and unpacks that client (../shared/peers/),
#     which test/api/graphql drives unmodified
#   - registers a Docker runtime named "nvidia" that is plain runc, so pods asking for the
#     NVIDIA runtime run on machines without GPUs
#   - starts dockerd (vfs storage, with its iptables rules: networks are isolated from each other)
# Idempotent: safe to run again; it only changes what is missing.
set -euo pipefail

LOG=/tmp/dockerd.log
DAEMON_JSON=/etc/docker/daemon.json
WAIT_S=${DOCKERD_WAIT_S:-60}

log() { printf '[host-deps] %s\n' "$*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
  log "must run as root"; exit 1
fi

# --- packages --------------------------------------------------------------------------------
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
need=()
# docker-registry + apache2-utils (htpasswd): a private registry with password auth that the
# private-image tests start and stop themselves (test/harness/private-registry.ts); nothing starts it here
# debootstrap: builds the Debian root filesystem of the Python test worker image (test/harness/python-worker-image.ts)
# postgresql: the PostgreSQL store and queue tests start their own cluster (initdb, pg_ctl) in a temp dir;
#   nothing starts the packaged one here
# espeak-ng: the text-to-speech model worker of the public model endpoints and its tests
# chromium: the browser test of pods' signed links (test/gateway/pod-ports.test.ts, driven by playwright-core);
#   openssh-server also makes the sshd test image (test/harness/sshd-image.ts), openssh-client runs ssh/scp there
# dnsmasq-base: the overlay's internal DNS (each globally-networked pod's resolver; docs/networking.md), which the
#   namespace test hosts run; iperf3: bench/overlay.ts (throughput of the overlay against plain routes)
# wireguard-go + wireguard-tools: the overlay's tunnel between data centers (docs/networking.md, "Between data
#   centers"); these VMs have no WireGuard kernel module, so the namespace test hosts run Debian's userspace one
for pkg in docker.io openssh-server openssh-client busybox-static iproute2 iptables jq docker-registry apache2-utils debootstrap \
  postgresql espeak-ng chromium dnsmasq-base iperf3 wireguard-go wireguard-tools; do
  installed "$pkg" || need+=("$pkg")
done
# runpod-python's dependencies from Debian: test/api/graphql runs the unmodified client with /usr/bin/python3
# (the list is PKGS in ../shared/peers/setup-python-peers.sh; keep the two the same)
for pkg in python3 python3-aiohttp python3-requests python3-urllib3 python3-tomli python3-tomlkit python3-cpuinfo \
  python3-backoff python3-paramiko python3-colorama python3-prettytable python3-click python3-tqdm python3-psutil \
  python3-fastapi python3-uvicorn; do
  installed "$pkg" || need+=("$pkg")
done
if [ "${#need[@]}" -gt 0 ]; then
  log "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# on a systemd machine the package enables a registry on :5000; the tests run their own, so keep it off
if [ -d /run/systemd/system ] && systemctl is-enabled docker-registry >/dev/null 2>&1; then
  log "disabling the packaged docker-registry service (tests start their own registry)"
  systemctl disable --now docker-registry >/dev/null 2>&1 || true
fi

# --- runpod-python peer ------------------------------------------------------------------------
# unpacks the client (MIT, unmodified) beside the packages above and checks that it imports; the tests
# run the same script (a no-op by then) for its PYTHONPATH
PEERS_DIR=${GPUFLEET_PEERS_DIR:-$(cd "$(dirname "$0")/.." && pwd)/../shared/peers}
if [ -f "$PEERS_DIR/setup-python-peers.sh" ]; then
  log "runpod-python peer: $(bash "$PEERS_DIR/setup-python-peers.sh" | tail -1)"
else
  log "no $PEERS_DIR/setup-python-peers.sh: the runpod-python tests will fail (set GPUFLEET_PEERS_DIR)"
fi

# --- daemon.json: runtime "nvidia" = runc --------------------------------------------------
# Debian's runc package ships /usr/sbin/runc (+ /usr/bin/runc symlink); use whatever PATH finds,
# absolute, so dockerd does not depend on its own PATH.
RUNC=$(command -v runc || true)
if [ -z "$RUNC" ]; then log "runc not found after installing docker.io"; exit 1; fi

mkdir -p /etc/docker
[ -s "$DAEMON_JSON" ] || echo '{}' > "$DAEMON_JSON"
tmp=$(mktemp)
jq --arg runc "$RUNC" '.runtimes = ((.runtimes // {}) + {"nvidia": {"path": $runc}})' \
  "$DAEMON_JSON" > "$tmp"
changed=0
if ! cmp -s "$tmp" "$DAEMON_JSON"; then
  cat "$tmp" > "$DAEMON_JSON"; changed=1
  log "wrote $DAEMON_JSON (nvidia runtime -> $RUNC)"
fi
rm -f "$tmp"

# --- dockerd ---------------------------------------------------------------------------------
if docker info >/dev/null 2>&1; then
  # already running: runtimes are reloadable, so SIGHUP instead of a restart (keeps containers)
  if [ "$changed" = 1 ] && pid=$(pidof dockerd); then
    log "dockerd running; reloading config (SIGHUP $pid)"
    kill -HUP $pid
    sleep 1
  fi
else
  # flags given both on the command line and in daemon.json make dockerd refuse to start
  args=()
  [ "$(jq 'has("storage-driver")' "$DAEMON_JSON")" = true ] || args+=(--storage-driver=vfs)
  # iptables stay on: Docker isolates networks from each other with its iptables rules, and the
  # tenant-isolation tests depend on that (docs/security.md)
  if [ "$(jq '.iptables == false' "$DAEMON_JSON")" = true ]; then
    log "$DAEMON_JSON sets iptables=false; tenant isolation needs Docker's iptables rules"; exit 1
  fi
  log "starting dockerd ${args[*]} (log: $LOG)"
  # setsid + nohup: dockerd must outlive this script and its shell
  setsid nohup dockerd "${args[@]}" >>"$LOG" 2>&1 < /dev/null &
  started=1
fi

deadline=$(( $(date +%s) + WAIT_S ))
until docker info >/dev/null 2>&1; do
  dead=0
  # fail fast when the dockerd we started has already died (bad flags, missing privileges)
  if [ -n "${started:-}" ] && ! pidof dockerd >/dev/null; then dead=1; fi
  if [ "$dead" = 1 ] || [ "$(date +%s)" -ge "$deadline" ]; then
    if [ "$dead" = 1 ]; then log "dockerd exited; tail of $LOG:"; else log "docker did not answer within ${WAIT_S}s; tail of $LOG:"; fi
    tail -n 40 "$LOG" >&2 || true
    exit 1
  fi
  sleep 1
done

if ! docker info --format '{{json .Runtimes}}' | jq -e 'has("nvidia")' >/dev/null; then
  log "dockerd is up but has no 'nvidia' runtime; see $LOG"; exit 1
fi
log "docker ready ($(docker version --format '{{.Server.Version}}'), runtimes: $(docker info --format '{{range $k, $v := .Runtimes}}{{$k}} {{end}}'))"
