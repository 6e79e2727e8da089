// Stack locks: one `gpufleet apply|destroy|import` of a stack at a time, per account. The lock is a
// lease (expiresAt) so a crashed apply cannot hold a stack forever; the holder renews by acquiring
// again, and releases it (force breaks someone else's lock, like `terraform force-unlock`).
import { GpufleetError } from '../../model/index.ts';
import type { StackLockRecord } from '../../model/index.ts';
import { STACK_LOCK_DEFAULT_TTL_SECONDS, stackLockAcquireSchema, type StackLockAcquireInput } from '../../model/index.ts';
import { check, compile } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import type { Principal } from '../../model/index.ts';

const validateAcquire = compile<StackLockAcquireInput>(stackLockAcquireSchema);

export interface StackLockView {
  stack: string;
  holder: string;
  acquiredAt: string;
  expiresAt: string;
}

export interface StackLockRelease {
  /** who releases it; only the holder may, unless the lock has expired or `force` is set */
  holder?: string | undefined;
  force?: boolean;
}

/** one lock per account and stack name: two accounts may both have a stack called "prod" */
const lockId = (accountId: string, stack: string) => `${accountId}:${stack}`;

const live = (l: StackLockRecord, now: number) => Date.parse(l.expiresAt) > now;

function view(stack: string, l: StackLockRecord): StackLockView {
  return { stack, holder: l.holder, acquiredAt: l.acquiredAt, expiresAt: l.expiresAt };
}

function lockedError(stack: string, l: StackLockRecord, hint: string): GpufleetError {
  return new GpufleetError('LOCKED', `Stack "${stack}" is locked by ${l.holder} since ${l.acquiredAt} (until ${l.expiresAt}); ${hint}`, {
    fields: { holder: l.holder, acquiredAt: l.acquiredAt, expiresAt: l.expiresAt },
  });
}

export class StackLockService {
  constructor(private readonly store: Store) {}

  /** Takes the lock, or renews it for the same holder (acquiredAt kept). A live lock of another holder is LOCKED. */
  async acquire(principal: Principal, stack: string, body: unknown): Promise<StackLockView> {
    // no body at all is an empty one: the schema then names the missing holder
    const input = check(validateAcquire, body ?? {}, 'stack lock');
    const id = lockId(principal.accountId, stack);
    return this.store.transact(async (tx) => {
      const now = new Date();
      const held = await tx.get('stackLocks', id);
      if (held && held.holder !== input.holder && live(held, now.getTime()))
        throw lockedError(stack, held, 'wait for it to finish, or break the lock with `gpufleet force-unlock`.');
      const lock: StackLockRecord = {
        id,
        holder: input.holder,
        acquiredAt: held?.holder === input.holder ? held.acquiredAt : now.toISOString(),
        expiresAt: new Date(now.getTime() + (input.ttlSeconds ?? STACK_LOCK_DEFAULT_TTL_SECONDS) * 1000).toISOString(),
      };
      tx.put('stackLocks', lock);
      return view(stack, lock);
    });
  }

  /** The live lock on a stack; NOT_FOUND when there is none (an expired lease is none). */
  async get(principal: Principal, stack: string): Promise<StackLockView> {
    const held = await this.store.get('stackLocks', lockId(principal.accountId, stack));
    if (!held || !live(held, Date.now())) throw new GpufleetError('NOT_FOUND', `Stack "${stack}" is not locked.`);
    return view(stack, held);
  }

  /** Releases the lock: a no-op when there is none; LOCKED when another holder's lease is live and not forced. */
  async release(principal: Principal, stack: string, by: StackLockRelease): Promise<void> {
    const id = lockId(principal.accountId, stack);
    await this.store.transact(async (tx) => {
      const held = await tx.get('stackLocks', id);
      if (!held) return;
      if (live(held, Date.now()) && !by.force && by.holder !== held.holder)
        throw lockedError(stack, held, 'only its holder may release it (or pass force=true).');
      tx.delete('stackLocks', id);
    });
  }
}
