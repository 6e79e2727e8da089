// A worker's token: RUNPOD_AI_API_KEY inside its container, sent raw as `Authorization` on every
// worker protocol call. It names its worker, so checking it is one record read and one hash, and it
// can do nothing but that worker's calls. The store keeps its sha256 (to check) and a sealed copy
// (for the provisioner to put in the container's env); it is never logged or returned by the API.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const PREFIX = 'gfw_';
/** gfw_<worker id>.<43 base64url characters: 256 random bits> */
const TOKEN = /^gfw_([a-z0-9]{1,64})\.([A-Za-z0-9_-]{43})$/;

export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');

export function newWorkerToken(workerId: string): { token: string; hash: string } {
  const token = `${PREFIX}${workerId}.${randomBytes(32).toString('base64url')}`;
  return { token, hash: tokenHash(token) };
}

/** The worker id a well-formed token names, or null. */
export function tokenWorkerId(token: string): string | null {
  return TOKEN.exec(token)?.[1] ?? null;
}

/** Constant-time comparison of a presented token with the stored hash. */
export function tokenMatches(token: string, storedHash: string): boolean {
  const a = Buffer.from(tokenHash(token), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The secret box context the sealed token is bound to (it opens in no other record or field). */
export const tokenSealContext = (workerId: string): string => `pods/${workerId}/workerToken`;
