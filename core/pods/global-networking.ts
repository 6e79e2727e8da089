// Global networking on a pod (docs/networking.md): which data centers may hold a globally-networked
// pod, and the pod's overlay address. The address is drawn inside the pod's own transaction (the
// house's plan/apply commit, docs/placement.md): a random free address of GPUFLEET_OVERLAY_CIDR,
// checked free by an indexed lookup in the embedded store (which runs transactions one at a time); on
// PostgreSQL the unique index gf_pods_overlay_ip refuses a pod whose address another has (committed
// before, or by another replica at the same moment), and the transaction runs again and draws another.
// Kept for the pod's life.
import { randomInt } from 'node:crypto';
import { assignable, GpufleetError, ipv4ToNumber, numberToIpv4, randomAssignable } from '../../model/index.ts';
import type { GlobalNetworkSettings, PodRecord } from '../../model/index.ts';
import type { Store, StoreTx } from '../../store/index.ts';

/** random draws before scanning the range for a free address (a nearly full range) */
const DRAWS = 16;
/** VXLAN ids below this are left to the host's own uses */
export const MIN_VNI = 4096;

const notInNetwork = (detail: string, fields: Record<string, unknown>) =>
  new GpufleetError('BAD_REQUEST', detail, { errors: ['$.globalNetworking: the data center is not in the global network'], fields });

export class GlobalNetworking {
  /** accounts known to have their VXLAN id (committed) */
  private readonly vnis = new Set<string>();
  /**
   * `uniqueAtCommit`: the store refuses a second pod with the same address at commit (PostgreSQL's
   * unique index, the transaction then runs again): a drawn address is taken as it is, with no lookup
   * first, whose read would make every concurrent create conflict with every other (SERIALIZABLE)
   */
  constructor(
    readonly settings: GlobalNetworkSettings,
    private readonly uniqueAtCommit = false,
  ) {}

  inNetwork(dataCenterId: string | null): boolean {
    return dataCenterId === null || !this.settings.excludedDataCenters.includes(dataCenterId);
  }

  /**
   * The data centers a globally-networked pod may be placed in: those asked (all when none) less the
   * excluded ones. 400 naming `$.globalNetworking` when none is left.
   */
  async placeableDataCenters(tx: StoreTx, asked: string[]): Promise<string[]> {
    const excluded = this.settings.excludedDataCenters;
    if (excluded.length === 0) return asked;
    const candidates = asked.length > 0 ? asked : [...new Set((await tx.list('hosts')).map((h) => h.dataCenterId))];
    const left = candidates.filter((dc) => !excluded.includes(dc));
    if (left.length === 0)
      throw notInNetwork(
        `Global networking is not available in ${asked.length > 0 ? `data center(s) ${asked.join(', ')}` : 'any data center of this fleet'}: the operator took ${excluded.join(', ')} out of the global network.`,
        { excluded },
      );
    return left;
  }

  /** a PATCH turning it on for a pod in an excluded data center: 400, nothing changes */
  assertPodInNetwork(pod: PodRecord): void {
    if (!this.inNetwork(pod.dataCenterId))
      throw notInNetwork(`Pod ${pod.id} is in data center ${pod.dataCenterId}, which is not in the global network (GPUFLEET_GLOBAL_NETWORK_EXCLUDE).`, {
        dataCenterId: pod.dataCenterId,
      });
  }

  /** the pod with `globalNetworking` as asked, addressed the first time it is turned on (and its account given a VXLAN id) */
  async apply(tx: StoreTx, pod: PodRecord, enabled: boolean): Promise<PodRecord> {
    if (!enabled) return { ...pod, globalNetworking: false };
    await this.ensureVni(tx, pod.accountId);
    if (pod.overlayIp && assignable(this.settings.range, ipv4ToNumber(pod.overlayIp) ?? -1)) return { ...pod, globalNetworking: true };
    return { ...pod, globalNetworking: true, overlayIp: await this.freeAddress(tx) };
  }

  /**
   * Gives the account its VXLAN id in a transaction of its own, before the pod's: the pods' own
   * transactions then only read the account, so concurrent creates of one account do not all conflict
   * on writing it (PostgreSQL, SERIALIZABLE). apply() still gives one if this has not.
   */
  async prepareAccount(store: Store, accountId: string): Promise<void> {
    if (this.vnis.has(accountId)) return;
    const vni = (await store.get('accounts', accountId))?.overlayVni;
    if (vni !== undefined) this.vnis.add(accountId);
    else await store.transact((tx) => this.ensureVni(tx, accountId));
  }

  /** the account's VXLAN id: drawn like an address, 4096 … 2^24-1, unique in the fleet */
  private async ensureVni(tx: StoreTx, accountId: string): Promise<void> {
    // an account's VXLAN id never changes once given: known here, the account is not read again
    if (this.vnis.has(accountId)) return;
    const account = await tx.get('accounts', accountId);
    if (!account) return;
    if (account.overlayVni !== undefined) {
      this.vnis.add(accountId);
      return;
    }
    for (;;) {
      const vni = randomInt(MIN_VNI, 2 ** 24);
      if (!this.uniqueAtCommit && (await tx.count('accounts', { overlayVni: vni })) > 0) continue;
      tx.put('accounts', { ...account, overlayVni: vni });
      return;
    }
  }

  private async freeAddress(tx: StoreTx): Promise<string> {
    const range = this.settings.range;
    for (let i = 0; i < DRAWS; i++) {
      const candidate = randomAssignable(range, randomInt(0, 2 ** 47) / 2 ** 47);
      if (this.uniqueAtCommit || (await tx.count('pods', { overlayIp: candidate })) === 0) return candidate;
    }
    // nearly full: the lowest free address, from one read of every address given
    const taken = new Set((await tx.list('pods')).map((p) => (p.overlayIp ? ipv4ToNumber(p.overlayIp) : null)));
    for (let a = range.base + 2; a < range.base + range.size - 1; a++) if (!taken.has(a)) return numberToIpv4(a);
    throw new GpufleetError('CAPACITY_UNAVAILABLE', `Every address of the overlay range ${range.cidr} is taken; the operator can widen GPUFLEET_OVERLAY_CIDR.`, {
      errors: ['$.globalNetworking: no free overlay address'],
    });
  }
}
