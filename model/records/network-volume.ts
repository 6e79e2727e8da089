// Where a network volume lives on a host. The operator mounts shared storage (NFS, CephFS, ...) at
// the same root on every host of a data center; a volume is one directory under it, so any host of
// the data center can bind-mount it into a container (docs/network-volumes.md).
import path from 'node:path';
import { GpufleetError } from '../base/errors.ts';

export const DEFAULT_VOLUME_ROOT = '/var/lib/gpufleet/volumes';
export const VOLUME_ROOT_ENV = 'GPUFLEET_VOLUME_ROOT';

/** volume ids become directory names, so only a safe alphabet is accepted (no `..`, no `/`) */
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The root from the environment. A relative root is refused rather than replaced: falling back to
 * the default could put volumes on local disk where other hosts cannot see them. */
export function volumeRoot(env: Record<string, string | undefined> = process.env): string {
  const root = env[VOLUME_ROOT_ENV];
  if (!root) return DEFAULT_VOLUME_ROOT;
  if (!path.isAbsolute(root)) throw new GpufleetError('INTERNAL', `${VOLUME_ROOT_ENV} must be an absolute path, not ${JSON.stringify(root)}`);
  return path.normalize(root).replace(/\/+$/, '') || '/';
}

/** `<root>/<volumeId>` on every host of the volume's data center; the provisioner bind-mounts it. */
export function volumeHostPath(volumeId: string, root: string = volumeRoot()): string {
  if (!SAFE_ID.test(volumeId)) throw new GpufleetError('INTERNAL', `unsafe network volume id ${JSON.stringify(volumeId)}`);
  return path.posix.join(root, volumeId);
}
