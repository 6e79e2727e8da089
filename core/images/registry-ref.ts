// A pod or template names a registry credential by id; it must be the caller's own.
import { GpufleetError } from '../../model/index.ts';
import type { StoreTx } from '../../store/index.ts';
import type { Principal } from '../../model/index.ts';

/** another account's credential reads as missing (ids of other accounts are 404-like, never 403) */
export async function checkRegistry(tx: StoreTx, principal: Principal, id: string | null): Promise<string | null> {
  if (id === null) return null;
  const reg = await tx.get('registries', id);
  if (!reg || reg.accountId !== principal.accountId)
    throw new GpufleetError('VALIDATION_FAILED', `Registry credential ${id} was not found.`, {
      errors: [`$.registry: registry ${id} not found`],
    });
  return id;
}
