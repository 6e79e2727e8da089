// The GPUs a record holds, as the rows of gf_gpu_claims that its transaction writes beside it. The
// primary key (host, GPU) is what makes "no GPU is given twice" hold across replicas: the placer of
// each replica proposes from its own view, and the commit re-checks here (docs/postgres.md).
import type { PodRecord } from '../../model/index.ts';

export interface GpuClaim {
  hostId: string;
  gpuUuid: string;
}

/** the collections whose records hold GPUs: pods (serverless workers are pods too) */
export const CLAIMING_COLLECTIONS: ReadonlySet<string> = new Set(['pods']);

/** What a record holds: a placed pod its GPUs on its host; anything else nothing. */
export function claimsOf(collection: string, record: unknown): GpuClaim[] {
  if (collection !== 'pods' || !record) return [];
  const pod = record as PodRecord;
  if (!pod.allocated || !pod.hostId || !Array.isArray(pod.gpuUuids)) return [];
  return pod.gpuUuids.map((gpuUuid) => ({ hostId: pod.hostId!, gpuUuid }));
}

export const sameClaims = (a: GpuClaim[], b: GpuClaim[]): boolean =>
  a.length === b.length && a.every((c, i) => c.hostId === b[i]?.hostId && c.gpuUuid === b[i]?.gpuUuid);
