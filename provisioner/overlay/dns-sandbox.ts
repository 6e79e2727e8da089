// Where each pod's resolver runs (docs/networking.md, "The resolver's sandbox"). dnsmasq answers a
// tenant's packets, so a flaw in it must give the tenant no more than a process that can read its
// account's names and answer on 127.0.0.53 in the tenant's own network namespace. The shell function
// below starts it:
//   - in the pod's network namespace (`nsenter -t <pid> -n`) and a mount namespace of its own
//     (`unshare --mount --propagation private`: nothing it mounts is seen by the host, and it all goes
//     when the process ends);
//   - chrooted into a tmpfs made read-only, holding only the system's programs and libraries (`/usr` and
//     the merged-/usr links, or /lib, /bin… bound read-only, nosuid), a passwd and group of two lines,
//     /dev/null and /dev/urandom, the account's hosts folder (read-only), the pod's upstream
//     nameservers (one file, read-only) and a folder for its pid file: no /etc/shadow, no /proc, no
//     other account's names, no host files, nothing writable but that folder (root's, so not even it
//     once dnsmasq is nobody);
//   - through setpriv: no-new-privs, and a capability bounding set of net_bind_service, setuid and
//     setgid only (binding 53, then becoming nobody:nogroup); dnsmasq binds, then drops to nobody with
//     no capability left (CapEff and CapPrm 0).
// Every host path it takes is a positional parameter (checked words of overlay-dns.ts); the function's
// text has no word from a plan. A host that cannot make the sandbox (no unshare, setpriv or chroot; a
// kernel that refuses) gets no resolver, never an unconfined one: its pods keep their resolv.conf.

/** where each pod's resolver listens, inside the pod (loopback: reachable from that pod only) */
export const DNS_ADDRESS = '127.0.0.53';

// run in the new mount namespace; $0 root, $1 hosts folder, $2 upstream file, $3 pid folder, then dnsmasq's words
const INNER = [
  'set -e; R=$0; H=$1; U=$2; P=$3; shift 4',
  'mount -t tmpfs -o size=256k,mode=755,nosuid,nodev tmpfs "$R"',
  // the system's programs and libraries, read-only (merged /usr: the links as they are)
  'for d in usr lib lib32 lib64 libx32 bin sbin; do if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$R/$d"; ' +
    'elif [ -d "/$d" ]; then mkdir "$R/$d"; mount --bind "/$d" "$R/$d"; mount -o remount,bind,ro,nosuid,nodev "$R/$d"; fi; done',
  'mkdir "$R/etc" "$R/hosts.d" "$R/run" "$R/dev"',
  `printf '%s\\n' 'root:x:0:0::/:/nonexistent' 'nobody:x:65534:65534::/nonexistent:/nonexistent' > "$R/etc/passwd"`,
  `printf '%s\\n' 'root:x:0:' 'nogroup:x:65534:' > "$R/etc/group"`,
  'for n in null urandom; do : > "$R/dev/$n"; mount --bind "/dev/$n" "$R/dev/$n"; done',
  'mount --bind "$H" "$R/hosts.d"; mount -o remount,bind,ro,nosuid,nodev,noexec "$R/hosts.d"',
  ': > "$R/etc/upstream"; mount --bind "$U" "$R/etc/upstream"; mount -o remount,bind,ro,nosuid,nodev,noexec "$R/etc/upstream"',
  'mount --bind "$P" "$R/run"; mount -o remount,bind,nosuid,nodev,noexec "$R/run"',
  'mount -o remount,ro,nosuid,nodev "$R"',
  'exec chroot "$R" setpriv --no-new-privs --bounding-set=-all,+net_bind_service,+setuid,+setgid -- dnsmasq "$@"',
].join('\n');

/**
 * `dns_start <container pid> <root> <hosts folder> <upstream file> <pid folder> <domain>`: dnsmasq in
 * its sandbox, daemonized once it listens (the exit status says whether it started); its pid in
 * `<pid folder>/dnsmasq.pid`
 */
export function sandboxFunction(): string[] {
  const inner = INNER.replace(/'/g, `'\\''`);
  return [
    'dns_start() { mkdir -p "$2" "$5" && chmod 700 "$2" && chmod 755 "$5" && rm -f "$5/dnsmasq.pid" && ' +
      `nsenter -t "$1" -n unshare --mount --propagation private sh -c '${inner}' "$2" "$3" "$4" "$5" ` +
      `--conf-file=/dev/null --no-hosts --resolv-file=/etc/upstream --strict-order --listen-address=${DNS_ADDRESS} --bind-interfaces ` +
      '--hostsdir=/hosts.d "--local=/$6/" --pid-file=/run/dnsmasq.pid --user=nobody --group=nogroup; }',
  ];
}
