// Which cached images an account may run on a host without pulling first. An image pulled with
// registry credentials is private to the accounts that pulled it; `docker run --pull never` would
// otherwise hand it to any tenant naming it. Pure: the provisioner reads and writes the host record.
import type { HostRecord } from './host.ts';

const IMAGE_ID = /^sha256:[0-9a-f]{64}$/;

export const isImageId = (s: string): boolean => IMAGE_ID.test(s);

/** Image ids on the host that `accountId` must not run from the cache (it pulls them itself first). */
export function imagesRefusedTo(host: HostRecord, accountId: string): string[] {
  return (host.privateImages ?? []).filter((i) => !i.accountIds.includes(accountId)).map((i) => i.imageId);
}

/**
 * The host after `accountId` pulled `imageId`: with credentials the image becomes (or stays) private
 * and the account may run it; without credentials the registry served it anonymously, so an account
 * already on the list stays and one not on it is added (the pull proved it can read the image).
 * Null when nothing changes.
 */
export function withPulledImage(host: HostRecord, imageId: string, accountId: string, withCredentials: boolean): HostRecord | null {
  if (!isImageId(imageId)) return null;
  const list = host.privateImages ?? [];
  const entry = list.find((i) => i.imageId === imageId);
  if (entry?.accountIds.includes(accountId)) return null;
  if (!entry && !withCredentials) return null;
  const next = entry
    ? list.map((i) => (i === entry ? { ...i, accountIds: [...i.accountIds, accountId] } : i))
    : [...list, { imageId, accountIds: [accountId] }];
  return { ...host, privateImages: next };
}
