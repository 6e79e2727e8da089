// Spec 2.2: the mount rules that answer 400 (cross-field conflicts), checked before the schema so a
// conflicting body is a 400 even when an entry is also incomplete. Incomplete entries are the
// schema's job (422).
import type { Mounts } from '../records/pod.ts';
import { fail400 } from './validation.ts';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function mountsOf(body: unknown): Record<string, unknown> | null {
  if (!isObject(body) || !isObject(body.mounts)) return null;
  return body.mounts;
}

function commonRules(m: Record<string, unknown>): void {
  if (m.persistent !== undefined && m.network !== undefined)
    fail400('A pod can have a persistent mount or a network mount, not both.', [
      '$.mounts: persistent and network are mutually exclusive',
    ]);
  if (Array.isArray(m.network) && m.network.length === 0)
    fail400('mounts.network must not be an empty array; omit it to keep the mount unchanged.', [
      '$.mounts.network: must not be empty',
    ]);
}

export function checkCreateMountRules(body: unknown): void {
  const m = mountsOf(body);
  if (m) commonRules(m);
}

export function checkUpdateMountRules(body: unknown, existing: Mounts): void {
  const m = mountsOf(body);
  if (!m) return;
  commonRules(m);
  if (m.persistent !== undefined && !existing.persistent)
    fail400(
      existing.network
        ? 'This pod was created with a network mount; a persistent mount cannot be added.'
        : 'This pod was created without mounts; a mount cannot be added by update.',
      ['$.mounts.persistent: mount kind not present at creation'],
    );
  if (m.network !== undefined && !existing.network)
    fail400(
      existing.persistent
        ? 'This pod was created with a persistent mount; a network mount cannot be added.'
        : 'This pod was created without mounts; a mount cannot be added by update.',
      ['$.mounts.network: mount kind not present at creation'],
    );
  if (Array.isArray(m.network) && existing.network) {
    m.network.forEach((entry, i) => {
      const was = existing.network?.[i]?.volumeId;
      if (isObject(entry) && typeof entry.volumeId === 'string' && entry.volumeId !== was)
        fail400(`volumeId is immutable: this pod mounts ${was ?? 'no volume'}, not ${entry.volumeId}.`, [
          `$.mounts.network[${i}].volumeId: is immutable`,
        ]);
    });
  }
}
