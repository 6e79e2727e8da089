// TEMPORARY (removed once the session exchange lands): without POST /console/session, sign in with
// the key held in memory only, for local development of the console.
import { ApiClient } from '../../client/index.ts';

export let devClient: ApiClient | null = null;

export async function devSignIn(key: string): Promise<{ accountId: string; scope: 'read' | 'read_write' | 'admin'; operator: boolean; keyPrefix: string; headers: Record<string, string> }> {
  const c = new ApiClient({ url: location.origin, apiKey: key });
  const account = await c.get<{ id: string; operator?: boolean }>('/v2/account');
  let scope: 'read' | 'read_write' | 'admin' = 'read';
  try {
    await c.get('/v2/keys');
    scope = 'admin';
  } catch {
    try {
      await c.post('/v2/pods?dryRun=true', {});
    } catch (e) {
      if ((e as { status?: number }).status !== 403) scope = 'read_write';
    }
  }
  devClient = c;
  return { accountId: account.id, scope, operator: account.operator === true, keyPrefix: key.slice(0, 8), headers: {} };
}
