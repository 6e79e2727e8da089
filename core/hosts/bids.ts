// An interruptible pod's bid against the operator's spot floors (docs/teams.md "Interruptible pods"):
// the tiers a bid may land in, what it may preempt, and the public platform's words for a bid that
// places nowhere. On-demand GPU pods preempt any interruptible pod; CPU pods never preempt.
import type { PriceBook } from '../../fleet/index.ts';
import type { CloudTier, PodRecord } from '../../model/index.ts';
import { GpufleetError, isInterruptible } from '../../model/index.ts';

/** The public platform's answer to a spot request it cannot place (runpodctl PR #267). */
export const NO_INSTANCES = 'There are no instances available with the request specifications. Please try again later.';

export function noInstances(fields: Record<string, unknown> = {}): GpufleetError {
  return new GpufleetError('CAPACITY_UNAVAILABLE', NO_INSTANCES, { fields: { reason: 'busy', constraint: 'gpu-count', ...fields } });
}

const TIERS: readonly CloudTier[] = ['SECURE', 'COMMUNITY'];

export interface BidTerms {
  /** the tier(s) the pod may land in */
  cloud: CloudTier | 'ALL';
  /** interruptible pods bidding less than this may be preempted for it (fleet/preemption.ts) */
  preemptBelow: number | undefined;
}

/**
 * How a pod bids for placement. An interruptible pod's explicit bid must reach the spot floor of a
 * tier it may use (otherwise the public platform's NO_INSTANCES), and narrows `ALL` to the tiers it
 * reaches; without a bid it bids the floor of the tier it lands in.
 */
export function bidTerms(pod: PodRecord, cloud: CloudTier | 'ALL', prices: PriceBook): BidTerms {
  if (!pod.gpu) return { cloud, preemptBelow: undefined };
  if (!isInterruptible(pod)) return { cloud, preemptBelow: Infinity };
  const tiers = cloud === 'ALL' ? TIERS : [cloud];
  const floors = new Map(tiers.map((t) => [t, prices.spotFloor(pod.gpu!.id, t)]));
  const bid = pod.bidPerGpu;
  if (typeof bid !== 'number') return { cloud, preemptBelow: Math.min(...floors.values()) };
  const reached = tiers.filter((t) => bid >= floors.get(t)!);
  if (reached.length === 0) throw noInstances({ constraint: 'gpu-count', bidPerGpu: bid, spotFloor: Math.min(...floors.values()) });
  return { cloud: reached.length === 1 ? reached[0]! : cloud, preemptBelow: bid };
}

/** The bid an interruptible pod placed in `cloud` pays per GPU-hour: its own, or that tier's floor. */
export function placedBid(pod: PodRecord, typeId: string, cloud: CloudTier, prices: PriceBook): number | undefined {
  if (!isInterruptible(pod)) return undefined;
  return typeof pod.bidPerGpu === 'number' ? pod.bidPerGpu : prices.spotFloor(typeId, cloud);
}
