// Ownership tags: every resource a stack creates carries its stack name and construct path, and the
// engine reads, updates and deletes only what carries its own stack's tag.
export const OWNER_TAG_PREFIX = 'gpufleet:';
export const STACK_TAG = 'gpufleet:stack';
export const PATH_TAG = 'gpufleet:path';

export function ownerTags(stack: string, path: string): Record<string, string> {
  return { [STACK_TAG]: stack, [PATH_TAG]: path };
}

/** The user's own tags: what is left after the ownership tags. */
export function userTags(tags: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in tags) if (!k.startsWith(OWNER_TAG_PREFIX)) out[k] = tags[k]!;
  return out;
}

export interface Owner {
  stack: string;
  path: string;
}

export function ownerOf(tags: Record<string, string> | undefined): Owner | null {
  const stack = tags?.[STACK_TAG];
  if (!stack) return null;
  return { stack, path: tags?.[PATH_TAG] ?? '' };
}
