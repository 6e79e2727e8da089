// `gpufleet import <path> <id>`: adopt an existing resource into a stack by tagging it with the stack
// and construct path. The next plan then shows how it differs from what the construct declares.
import type { ApiClient } from '../../client/index.ts';
import { KINDS } from '../kinds/index.ts';
import { ownerOf, ownerTags } from '../contract/ownership.ts';
import type { DesiredStack } from './synth.ts';

export class ImportError extends Error {
  override readonly name = 'ImportError';
}

export interface ImportResult {
  kind: string;
  path: string;
  id: string;
  name: string;
}

/** `path` is the construct path below the stack, or the full path starting with the stack name. */
export async function importResource(api: ApiClient, stack: DesiredStack, path: string, id: string): Promise<ImportResult> {
  const rel = path.startsWith(`${stack.name}/`) ? path.slice(stack.name.length + 1) : path;
  const declared = stack.resources.find((r) => r.path === rel);
  if (!declared)
    throw new ImportError(`Stack "${stack.name}" declares no resource at "${rel}"; declare the construct first (paths: ${stack.resources.map((r) => r.path).join(', ')}).`);
  if (declared.kind === 'registry-ref') throw new ImportError(`${rel} is a RegistryRef: it is looked up by name, there is nothing to import.`);
  const handler = KINDS[declared.kind];
  const live = await handler.get(api, id);
  if (!live) throw new ImportError(`No ${handler.label} ${id} exists in this account.`);
  const owner = ownerOf(live.tags);
  if (owner && owner.stack !== stack.name)
    throw new ImportError(`The ${handler.label} ${id} belongs to stack "${owner.stack}" (${owner.path}); it cannot be claimed by stack "${stack.name}".`);
  if (owner && owner.path !== rel)
    throw new ImportError(`The ${handler.label} ${id} is already managed by this stack as ${owner.path}.`);
  const taken = (await handler.list(api)).find((r) => r.id !== id && ownerOf(r.tags)?.stack === stack.name && ownerOf(r.tags)?.path === rel);
  if (taken) throw new ImportError(`${rel} already manages ${handler.label} ${taken.id}; destroy it or import into another path.`);
  if (!owner) await handler.setTags(api, id, { ...live.tags, ...ownerTags(stack.name, rel) });
  return { kind: declared.kind, path: rel, id, name: live.name };
}
