// Internal DNS of the overlay (docs/networking.md, "Internal DNS"): the shell lines of the overlay
// script that make `<pod id>.<domain>` of an account's globally-networked pods resolve inside each of
// them. Per pod, a dnsmasq runs in the pod's own network namespace, in a sandbox (dns-sandbox.ts: its
// own mount namespace, a read-only root of the system's programs and its account's names, nobody with
// no capability), listening on 127.0.0.53 there only (nothing else can reach it: another pod, another account, the LAN); it answers
// the internal domain from the account's hosts file on this host (never anything else under it:
// NXDOMAIN) and forwards every other name to the nameservers the pod had before (Docker's, so names
// resolve as they did). The pod's resolv.conf (the host file Docker bind-mounts) names it; the
// original is kept beside and put back when the pod leaves the overlay. Every word is checked against
// a grammar here; nothing a user wrote reaches the script.
import type { AccountOverlayPlan, HostOverlayPlan } from './overlay-plan.ts';
import { DNS_ADDRESS, sandboxFunction } from './dns-sandbox.ts';
import { check as checkWord, ipWord, podIdWord } from './overlay-words.ts';

export { DNS_ADDRESS } from './dns-sandbox.ts';
/** the hosts' folder of the DNS state: one folder per account namespace (`<root>/<namespace>`) */
export const DNS_ROOT = '/run/gpufleet/dns';
/** the first line of a resolv.conf gpufleet wrote */
export const RESOLV_MARK = '# gpufleet-dns';
/** printed on stderr when the host has no dnsmasq: the overlay works, names do not resolve */
export const DNS_MISSING = 'gpufleet-overlay-warn no-dnsmasq';

const DOMAIN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
/** Docker's own file, `<data root>/containers/<container id>/resolv.conf`: absolute, no `..`, no space or shell character */
const RESOLV_PATH = /^(\/[A-Za-z0-9_][A-Za-z0-9._-]*)*\/containers\/[0-9a-f]{64}\/resolv\.conf$/;

const WHERE = 'overlay DNS plan';
const check = (ok: boolean, what: string, value: unknown) => checkWord(ok, what, value, WHERE);

/** shell functions the DNS lines use (after the overlay script's `made`/`failed`); `failedTag` starts its failure lines */
export function dnsPrelude(failedTag: string): string[] {
  return [
    // a resolver that cannot start (e.g. a program in the pod holds port 53) is reported, not a failed run:
    // the overlay's routes stand, and it is tried again at the next verify rather than at every pass
    `dnsfailed() { echo "${failedTag} $*" >&2; }`,
    // the dnsmasq a pid file names, if it still runs
    'dns_alive() { dp=$(cat "$1" 2>/dev/null) && [ -n "$dp" ] && [ "$(cat /proc/$dp/comm 2>/dev/null)" = dnsmasq ]; }',
    // a pod's resolver gone: its process stopped, its resolv.conf as it was, its files removed
    `dns_drop() { if dns_alive "$1/$2.pid"; then kill "$dp"; fi; r=$(cat "$1/$2.path" 2>/dev/null); ` +
      `if [ -n "$r" ] && [ -f "$r" ] && [ -f "$1/$2.up" ] && grep -q '^${RESOLV_MARK}' "$r"; then cat "$1/$2.up" > "$r"; fi; ` +
      `rm -f "$1/$2.pid" "$1/$2.up" "$1/$2.path" "$1/$2.err"; rm -rf "$1/$2.run"; rmdir "$1/$2.root" 2>/dev/null; made removed-dns "$2"; }`,
    // dnsmasq in its sandbox (dns-sandbox.ts)
    ...sandboxFunction(),
    // an account folder of this host whose namespace the plan no longer has: every resolver in it dropped
    'dns_drop_all() { for f in "$1"/*.pid; do [ -e "$f" ] || continue; p=${f##*/}; dns_drop "$1" "${p%.pid}"; done; rm -rf "$1"; }',
  ];
}

/** removes the DNS of account folders of this host that the plan no longer has */
export function staleDnsLines(plan: HostOverlayPlan, wantedNs: string[]): string[] {
  return [
    `for d in ${DNS_ROOT}/${plan.nsPrefix}*; do [ -d "$d" ] || continue; case " ${wantedNs.join(' ')} " in *" \${d##*/} "*) ;; *) dns_drop_all "$d";; esac; done`,
  ];
}

/** the lines for one account's names on this host and its local pods' resolvers */
export function accountDnsLines(plan: HostOverlayPlan, a: AccountOverlayPlan): string[] {
  check(DOMAIN.test(plan.domain) && plan.domain.length <= 200, 'domain', plan.domain);
  const dir = `${DNS_ROOT}/${a.ns}`;
  const names = [...a.local, ...a.remote].map((p) => `${ipWord(p.ip, WHERE)} ${podIdWord(p.podId, WHERE)}.${plan.domain}`);
  const lines = [
    `mkdir -p ${dir}/hosts.d && chmod 755 /run/gpufleet ${DNS_ROOT} ${dir} ${dir}/hosts.d || failed dns-dir ${a.ns}`,
    // the account's names, replaced whole (dnsmasq reads the folder again on the rename; a dot file it ignores)
    `printf '%s\\n' ${names.map((n) => `'${n}'`).join(' ')} > ${dir}/hosts.d/.names && ` +
      `{ cmp -s ${dir}/hosts.d/.names ${dir}/hosts.d/names && rm -f ${dir}/hosts.d/.names || { mv -f ${dir}/hosts.d/.names ${dir}/hosts.d/names && made dns-names ${a.ns}; }; } || failed dns-names ${a.ns}`,
  ];
  const wanted: string[] = [];
  for (const p of a.local) {
    if (p.resolvConf === null) continue;
    check(RESOLV_PATH.test(p.resolvConf) && !p.resolvConf.includes('/../'), 'resolv.conf path', p.resolvConf);
    check(Number.isInteger(p.pid) && p.pid > 0, 'pid', p.pid);
    wanted.push(p.podId);
    const f = `${dir}/${p.podId}`;
    const r = p.resolvConf;
    // in its sandbox (dns-sandbox.ts); `<pod>.pid` links to the pid file it writes there
    const dnsmasq =
      `dns_start ${p.pid} ${f}.root ${dir}/hosts.d ${f}.up ${f}.run ${plan.domain} </dev/null >/dev/null 2>${f}.err && ` +
      `ln -sfn ${p.podId}.run/dnsmasq.pid ${f}.pid`;
    lines.push(
      // the pod's nameservers before ours (Docker's) are the resolver's upstream; a resolv.conf Docker wrote again is read again
      // written in place (the resolver's sandbox holds this very file, read-only)
      `if ! grep -q '^${RESOLV_MARK}' ${r}; then grep -v '^nameserver ${DNS_ADDRESS.replace(/\./g, '\\.')}$' ${r} > ${f}.up.new && cat ${f}.up.new > ${f}.up && rm -f ${f}.up.new || dnsfailed dns-upstream ${p.podId}; fi`,
      // a resolver in this container's namespace (a restarted container has a new one: the old resolver goes)
      `if ! dns_alive ${f}.pid || [ "$(readlink /proc/$dp/ns/net)" != "$(readlink /proc/${p.pid}/ns/net)" ]; then ` +
        `if dns_alive ${f}.pid; then kill "$dp"; fi; rm -f ${f}.pid; ` +
        `if command -v dnsmasq >/dev/null; then ${dnsmasq} && made dns ${p.podId} || dnsfailed dns ${p.podId}; else echo '${DNS_MISSING}' >&2; fi; fi`,
      `echo ${r} > ${f}.path`,
      `if dns_alive ${f}.pid && ! grep -q '^${RESOLV_MARK}' ${r}; then ` +
        `{ printf '%s\\n' '${RESOLV_MARK}: ${plan.domain} answered by gpufleet (docs/networking.md)' 'nameserver ${DNS_ADDRESS}'; grep -v '^[[:space:]]*nameserver' ${f}.up; } > ${f}.rc && ` +
        `cat ${f}.rc > ${r} && rm -f ${f}.rc && made resolv ${p.podId} || dnsfailed resolv ${p.podId}; fi`,
    );
  }
  // resolvers of pods that left the overlay here (turned off, stopped, moved)
  lines.push(
    `for f in ${dir}/*.pid; do [ -e "$f" ] || continue; p=\${f##*/}; p=\${p%.pid}; case " ${wanted.join(' ')} " in *" $p "*) ;; *) dns_drop ${dir} "$p";; esac; done`,
  );
  return lines;
}
