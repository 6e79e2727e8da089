// The stack lock, held through the API (POST/DELETE /v2/stack-locks/{stack}) for the length of an
// apply, destroy or import, so two of them never interleave on one stack. A lease: renewed while
// `apply --watch` runs, expiring by itself if this process dies.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { ApiError, type ApiClient } from '../../client/index.ts';

export class StackLockedError extends Error {
  override readonly name = 'StackLockedError';
}

export interface StackLock {
  holder: string;
  renew(): Promise<void>;
  release(): Promise<void>;
}

export function lockHolder(operation: string): string {
  return `${os.userInfo().username}@${os.hostname()} pid ${process.pid} (${operation}, ${randomBytes(3).toString('hex')})`;
}

const path = (stack: string) => `/v2/stack-locks/${encodeURIComponent(stack)}`;

export async function acquireStackLock(api: ApiClient, stack: string, operation: string, ttlSeconds = 900): Promise<StackLock> {
  const holder = lockHolder(operation);
  const acquire = async () => {
    try {
      await api.post(path(stack), { holder, ttlSeconds });
    } catch (e) {
      if (e instanceof ApiError && e.code === 'LOCKED') throw new StackLockedError(e.message);
      throw e;
    }
  };
  await acquire();
  return {
    holder,
    renew: acquire,
    release: () => api.delete(`${path(stack)}?holder=${encodeURIComponent(holder)}`),
  };
}

export async function withStackLock<T>(api: ApiClient, stack: string, operation: string, fn: (lock: StackLock) => Promise<T>): Promise<T> {
  const lock = await acquireStackLock(api, stack, operation);
  try {
    return await fn(lock);
  } finally {
    await lock.release().catch(() => {
      /* the lease expires by itself; a failed release must not hide fn's outcome */
    });
  }
}

export async function forceUnlock(api: ApiClient, stack: string): Promise<void> {
  await api.delete(`${path(stack)}?force=true`);
}
