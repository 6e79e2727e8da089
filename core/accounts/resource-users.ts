// How a refusal names who still uses a resource (a pod, an endpoint, a template) without revealing
// another account's ids.
import type { Principal } from '../../model/index.ts';

/** Names a user of a resource without revealing another account's ids. */
export function describeUser(principal: Principal, kind: string, rec: { id: string; accountId: string } | undefined): string | null {
  if (!rec) return null;
  return rec.accountId === principal.accountId ? `${kind} ${rec.id}` : `a ${kind} of another account`;
}
