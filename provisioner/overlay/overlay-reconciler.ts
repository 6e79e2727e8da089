// The overlay's part of a host's reconcile pass (docs/networking.md): plans the host's overlay from
// the store and the containers the pass observed, and runs the script over the host's SSH connection
// when the plan changed since the last run that succeeded there, or when the last one is older than
// `verifyMs` (a host rebooted, or something removed a device: the script puts back only what is missing).
// Before it, on its own path and whatever the plan (none, empty or unchanged), every enrolled host gets
// the guard that keeps pods from sending VXLAN (overlay-guard.ts), checked again every `verifyMs`.
import type { Logger } from 'pino';
import { PROVISIONER_ACTOR, type HostOverlayFacts, type HostRecord, type PodRecord } from '../../model/index.ts';
import type { Services } from '../../core/index.ts';
import { planHostOverlay, onOverlay, type HostOverlayPlan } from './overlay-plan.ts';
import { FAILED, MADE, overlayScript } from './overlay-script.ts';
import { GUARD_FAILED, GUARD_MADE, guardScript } from './overlay-guard.ts';
import { VXLAN_PORT } from './overlay-plan.ts';
import { DNS_MISSING } from './overlay-dns.ts';
import { readReport, WIREGUARD_MISSING } from './overlay-wireguard.ts';

/** what the overlay needs of a container the pass observed (host-docker.ts's ObservedContainer has it) */
export interface OverlayContainer {
  podId: string;
  running: boolean;
  pid: number;
  /** the host file that is its /etc/resolv.conf */
  resolvConf?: string;
}

export interface OverlayRun {
  /** what the script made or removed (`namespace …`, `podnet1 <pod>`, `removed-route …`) */
  made: string[];
  failed: string[];
}

export class OverlayReconciler {
  /** per host: the plan last applied there and when */
  private readonly applied = new Map<string, { key: string; at: number }>();
  /** per host: what its last run made (tests and debugging) */
  readonly lastRun = new Map<string, OverlayRun>();
  /** per host: when its guard was last found (or put) in place */
  private readonly guarded = new Map<string, number>();
  /** per host: what its last guard run added (tests and debugging) */
  readonly lastGuard = new Map<string, OverlayRun>();

  constructor(
    private readonly s: Services,
    private readonly verifyMs = 10_000,
    private readonly logger?: Logger,
  ) {}

  /** forget what was applied on a host: the next pass runs its script whatever the plan */
  invalidate(hostId: string): void {
    this.applied.delete(hostId);
    this.guarded.delete(hostId);
  }

  /** runs a script (`sh -s`) on the host and reads its made/failed lines; ok when it exited 0. Throws when the host is not reached */
  private async run(host: HostRecord, script: string, tags: { made: string; failed: string }, what: string, into: Map<string, OverlayRun>): Promise<{ ok: boolean; stdout: string }> {
    const res = await this.s.sshPool.exec(this.s.fleet.target(host), 'sh -s', { stdin: script, allowFailure: true });
    const lines = (text: string, tag: string) => text.split('\n').filter((l) => l.startsWith(`${tag} `)).map((l) => l.slice(tag.length + 1));
    const made = lines(res.stdout, tags.made);
    const failed = lines(res.stderr, tags.failed);
    into.set(host.id, { made, failed });
    if (made.length > 0) this.logger?.info({ hostId: host.id, made }, `${what}: made on the host`);
    if (res.stderr.includes(DNS_MISSING)) this.logger?.warn({ hostId: host.id }, 'the host has no dnsmasq: internal DNS names do not resolve in its pods (docs/networking.md)');
    if (res.stderr.includes(WIREGUARD_MISSING)) this.logger?.warn({ hostId: host.id }, 'the host has neither the kernel\'s WireGuard nor wireguard-go: its pods do not reach other data centers (docs/networking.md)');
    if (res.code !== 0) this.logger?.warn({ hostId: host.id, failed, code: res.code, stderr: res.stderr.slice(0, 2000) }, `${what} failed on the host; retrying next pass`);
    else if (failed.length > 0) this.logger?.warn({ hostId: host.id, failed, stderr: res.stderr.slice(0, 2000) }, `${what}: some steps failed on the host; retrying at the next verify`);
    return { ok: res.code === 0, stdout: res.stdout };
  }

  /** what the overlay script reported about the host (its underlay MTU, its WireGuard public key), stored when it changed */
  private async record(host: HostRecord, stdout: string): Promise<void> {
    const seen = readReport(stdout);
    const before = host.overlay;
    // a run without a tunnel prints no key: the one stored stays (the host keeps its key file)
    const next: HostOverlayFacts = { underlayMtu: seen.underlayMtu, wireguardPublicKey: seen.wireguardPublicKey ?? before?.wireguardPublicKey ?? null };
    if (before && before.underlayMtu === next.underlayMtu && before.wireguardPublicKey === next.wireguardPublicKey) return;
    await this.s.store.transact(async (tx) => {
      const h = await tx.get('hosts', host.id);
      if (h) tx.put('hosts', { ...h, overlay: next });
    }, { actor: PROVISIONER_ACTOR });
    this.logger?.info({ hostId: host.id, overlay: next }, 'overlay: the host reported its underlay MTU and WireGuard key');
  }

  /** puts the guard in place on the host when it was not checked within `verifyMs`; never throws */
  async guard(host: HostRecord): Promise<void> {
    const at = this.guarded.get(host.id);
    if (at !== undefined && Date.now() - at < this.verifyMs) return;
    this.guarded.delete(host.id);
    try {
      if ((await this.run(host, guardScript(VXLAN_PORT), { made: GUARD_MADE, failed: GUARD_FAILED }, 'VXLAN guard', this.lastGuard)).ok) this.guarded.set(host.id, Date.now());
    } catch (err) {
      this.logger?.warn({ err, hostId: host.id }, 'VXLAN guard failed; retrying next pass');
    }
  }

  async plan(host: HostRecord, containers: readonly OverlayContainer[]): Promise<HostOverlayPlan | null> {
    const here = (await this.s.store.list('pods', { hostId: host.id })).filter(onOverlay);
    const accounts = [...new Set(here.map((p) => p.accountId))];
    const pods: PodRecord[] = [];
    const vnis = new Map<string, number>();
    for (const accountId of accounts) {
      pods.push(...(await this.s.store.list('pods', { accountId })));
      const vni = (await this.s.store.get('accounts', accountId))?.overlayVni;
      if (vni !== undefined) vnis.set(accountId, vni);
    }
    // the hosts are read only to find remote pods' hosts: a host with no overlay pod (the usual case) needs none
    const hosts = new Map(accounts.length === 0 ? [] : (await this.s.store.list('hosts')).map((h) => [h.id, h]));
    const live = containers.filter((c) => c.running && c.pid > 0);
    const pids = new Map(live.map((c) => [c.podId, c.pid]));
    const resolvConfs = new Map(live.filter((c) => c.resolvConf).map((c) => [c.podId, c.resolvConf!]));
    return planHostOverlay({ host, settings: this.s.pods.network.settings, pods, vnis, hosts, pids, resolvConfs });
  }

  /** plans and, when needed, runs the script; never throws (a failure is logged and retried next pass) */
  async reconcile(host: HostRecord, containers: readonly OverlayContainer[]): Promise<void> {
    await this.guard(host);
    try {
      const plan = await this.plan(host, containers);
      if (!plan) return;
      const key = JSON.stringify(plan);
      const last = this.applied.get(host.id);
      // unchanged: nothing to do until it is time to verify (a host without overlay pods: never)
      if (last && last.key === key && (plan.accounts.length === 0 || Date.now() - last.at < this.verifyMs)) return;
      this.applied.delete(host.id);
      const res = await this.run(host, overlayScript(plan), { made: MADE, failed: FAILED }, 'overlay setup', this.lastRun);
      await this.record(host, res.stdout);
      if (res.ok) this.applied.set(host.id, { key, at: Date.now() });
    } catch (err) {
      this.applied.delete(host.id);
      this.logger?.warn({ err, hostId: host.id }, 'overlay reconcile failed; retrying next pass');
    }
  }
}
