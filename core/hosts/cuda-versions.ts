// A CUDA minimum (GraphQL's minCudaVersion, for pods and endpoints) as the list of CUDA versions a
// pod or an endpoint keeps: records and the placer match a list (allowedCudaVersions), so "12.4 or
// newer" becomes the versions the fleet's hosts have at or above 12.4, intersected with an explicit
// list when one is given. With no host new enough the list is the minimum itself, which no host
// matches, so placement names the CUDA constraint instead of ignoring it.
import { cudaKey } from '../../fleet/index.ts';
import { fail422 } from '../../model/index.ts';
import type { StoreReader } from '../../store/index.ts';

export const CUDA_VERSION = /^[0-9]+\.[0-9]+$/;

/** The hosts' CUDA versions (major.minor) at or above `min`, oldest first, narrowed to `allowed` when given. */
export function cudaVersionsFrom(hostVersions: Iterable<string | null>, min: string, allowed: readonly string[] | undefined): string[] {
  const floor = cudaKey(min);
  const versions = new Set<string>();
  for (const v of hostVersions) {
    const m = v ? /^(\d+)\.(\d+)/.exec(v) : null;
    if (m && cudaKey(`${m[1]}.${m[2]}`) >= floor) versions.add(`${m[1]}.${m[2]}`);
  }
  let list = [...versions].sort((a, b) => cudaKey(a) - cudaKey(b));
  if (allowed) list = list.filter((v) => allowed.some((a) => cudaKey(a) === cudaKey(v)));
  return list.length ? list : [min];
}

/**
 * `allowed` with the minimum applied against the fleet as it is in `store` (read in the caller's
 * transaction when it has one); `allowed` unchanged when there is no minimum.
 */
export async function cudaVersionsAtLeast(
  store: StoreReader,
  min: string | undefined,
  allowed: string[] | undefined,
  what: string,
): Promise<string[] | undefined> {
  if (min === undefined) return allowed;
  if (!CUDA_VERSION.test(min)) fail422(what, ['$.minCudaVersion: must look like 12.4']);
  return cudaVersionsFrom(
    (await store.list('hosts')).map((h) => h.facts.cudaVersion),
    min,
    allowed,
  );
}
