// `gpufleet db import --from <data dir>`: an embedded store's records copied into PostgreSQL through
// the PostgreSQL store's own transactions (so env values are sealed again under the database's key
// and every placed pod's GPUs become claim rows), then checked: every source id must be in the
// database, and into an empty database the counts must match exactly.
import { COLLECTION_NAMES, GpufleetError } from '../../model/index.ts';
import { LowdbStore } from '../embedded/lowdb-store.ts';
import type { SecretBox } from '../base/secret-box.ts';
import type { CollectionName } from '../base/store.ts';
import type { PgStore } from './pg-store.ts';
import { tableOf } from './pg-schema.ts';

export interface ImportCount {
  collection: string;
  /** records in the data directory */
  source: number;
  /** of them, found in the database afterwards */
  imported: number;
  /** records of the collection in the database afterwards */
  inDatabase: number;
}

export interface ImportOptions {
  from: string;
  store: PgStore;
  /** opens the data directory's sealed values: the key it was written with */
  sourceBox: SecretBox;
  /** merge into a database that already holds records (by id: a source record replaces one with its id) */
  allowNonEmpty?: boolean;
  /** records per transaction */
  batch?: number;
  onProgress?: (collection: string, done: number, total: number) => void;
}

export async function importDataDir(opts: ImportOptions): Promise<ImportCount[]> {
  const db = opts.store;
  const before = new Map<string, number>();
  for (const c of COLLECTION_NAMES) before.set(c, await db.count(c));
  const held = [...before].filter(([, n]) => n > 0);
  if (held.length > 0 && !opts.allowNonEmpty)
    throw new GpufleetError(
      'CONFLICT',
      `the database already holds records (${held.map(([c, n]) => `${c}: ${n}`).join(', ')}); import into an empty database, or pass --allow-non-empty to merge`,
      { fields: { held: Object.fromEntries(held) } },
    );
  // the control plane must be stopped: opening replays the journal into the snapshot as a start would
  const source = await LowdbStore.open({ dir: opts.from, secretBox: opts.sourceBox, onNotice: () => undefined });
  const counts: ImportCount[] = [];
  try {
    const batch = opts.batch ?? 200;
    for (const c of COLLECTION_NAMES) {
      const records = await source.list(c);
      for (let i = 0; i < records.length; i += batch) {
        const slice = records.slice(i, i + batch);
        await db.transact(
          (tx) => {
            for (const r of slice) tx.put(c as CollectionName, r as never);
          },
          { actor: 'operator' },
        );
        opts.onProgress?.(c, Math.min(i + batch, records.length), records.length);
      }
      const ids = records.map((r) => r.id);
      const found = await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${tableOf(c)} WHERE id = ANY($1::text[])`, [ids]);
      counts.push({ collection: c, source: records.length, imported: found.rows[0]?.n ?? 0, inDatabase: await db.count(c) });
    }
  } finally {
    await source.close();
  }
  const wrong = counts.filter((k) => k.imported !== k.source || (held.length === 0 && k.inDatabase !== k.source));
  if (wrong.length > 0)
    throw new GpufleetError(
      'INTERNAL',
      `the import does not check out: ${wrong.map((k) => `${k.collection}: ${k.source} in the data directory, ${k.imported} of them and ${k.inDatabase} in all in the database`).join('; ')}`,
      { fields: { counts } },
    );
  return counts;
}
