// Private images on a host (model/records/private-images.ts, docs/security.md): the cached images a pod of an
// account may not run without pulling first, and the record of who pulled what with credentials.
// Read from the store at the moment of the run, not from the pass's host snapshot: a pod earlier in
// the same pass may just have pulled a private image.
import { imagesRefusedTo, withPulledImage } from '../model/index.ts';
import type { Store } from '../store/index.ts';

export async function refusedImages(store: Store, hostId: string, accountId: string): Promise<string[]> {
  const host = await store.get('hosts', hostId);
  return host ? imagesRefusedTo(host, accountId) : [];
}

export async function recordPull(store: Store, hostId: string, imageId: string, accountId: string, withCredentials: boolean): Promise<void> {
  await store.transact(async (tx) => {
    const host = await tx.get('hosts', hostId);
    const next = host && withPulledImage(host, imageId, accountId, withCredentials);
    if (next) tx.put('hosts', next);
  });
}
