// Faults at the moment a public model job's charge is written: `atCharge` wraps a store's
// transactions so that the one writing a `public-endpoint` billing record runs to its end and then
// waits for `fault(rec)` before it commits. The fault holds it (a promise that never settles: the
// process is then SIGKILLed with the charge uncommitted) or refuses it (throws: the transaction
// commits nothing, as a store that is down would). Answers the function that unwraps the store.
import type { BillingRecord } from '../../../model/index.ts';
import type { Store, StoreTx } from '../../../store/index.ts';

export function atCharge(store: Store, fault: (rec: BillingRecord) => Promise<void> | void): () => void {
  const transact = store.transact;
  store.transact = ((fn: (tx: StoreTx) => unknown, opts?: Parameters<Store['transact']>[1]) =>
    transact.call(
      store,
      async (tx) => {
        let charge: BillingRecord | undefined;
        const watched = new Proxy(tx, {
          get(target, key, receiver) {
            if (key !== 'put') return Reflect.get(target, key, receiver) as unknown;
            return (c: Parameters<StoreTx['put']>[0], rec: Parameters<StoreTx['put']>[1]) => {
              if (c === 'billing' && (rec as BillingRecord).kind === 'public-endpoint') charge = rec as BillingRecord;
              target.put(c, rec);
            };
          },
        });
        const out = await fn(watched);
        if (charge) await fault(charge);
        return out;
      },
      opts,
    )) as Store['transact'];
  return () => {
    store.transact = transact;
  };
}
