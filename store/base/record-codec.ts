// The persistence boundary: how a record is written to the snapshot and the journal. Fields that hold
// secrets (env values of pods, templates and endpoints, and endpoints' template pins) are sealed with the secret box on their way to
// disk and opened on the way back, so services and readers see plain values in memory and no file in
// the data directory holds them in clear. On disk a record keeps its other fields as they are and
// carries `$sealed: { <field>: <ciphertext> }` instead of the sealed fields; the ciphertext is bound
// to `<collection>/<id>/<field>`, so it does not open in another record.
import { GpufleetError } from '../../model/index.ts';
import type { CollectionName } from './store.ts';
import type { SecretBox } from './secret-box.ts';

/** the fields sealed at rest, per collection */
export const SEALED_FIELDS: Partial<Record<CollectionName, readonly string[]>> = {
  pods: ['env'],
  templates: ['env'],
  // templatePin: a copy of another account's template, env included (core/template-pins.ts)
  endpoints: ['env', 'templatePin'],
};

const SEALED = '$sealed';

export type StoredRecord = { id: string } & Record<string, unknown>;

interface Encoded {
  stored: StoredRecord;
  /** each sealed field's plain JSON, to tell whether the next version changed it */
  plain: Record<string, string>;
}

export class RecordCodec {
  /**
   * Record (frozen, so never changed) → its disk form. A record is sealed once, when it is written;
   * every later snapshot reuses that ciphertext instead of sealing all records again.
   */
  private readonly sealed = new WeakMap<object, Encoded>();

  constructor(private readonly box: SecretBox) {}

  /**
   * The form written to disk. `prev`: the version this record replaces; a sealed field it did not
   * change keeps its ciphertext (most writes, a stop or a start, leave env as it was, and sealing
   * costs more than the rest of the write).
   */
  encode(c: string, rec: StoredRecord, prev?: StoredRecord): StoredRecord {
    const fields = SEALED_FIELDS[c as CollectionName];
    if (!fields) return rec;
    const known = this.sealed.get(rec);
    if (known) return known.stored;
    const before = prev && prev.id === rec.id ? this.sealed.get(prev) : undefined;
    const out: StoredRecord = { ...rec };
    const sealed: Record<string, string> = {};
    const plain: Record<string, string> = {};
    for (const f of fields) {
      if (rec[f] === undefined) continue;
      const json = JSON.stringify(rec[f]);
      const kept = before?.plain[f] === json ? (before.stored[SEALED] as Record<string, string>)[f] : undefined;
      sealed[f] = kept ?? this.box.seal(json, `${c}/${rec.id}/${f}`);
      plain[f] = json;
      delete out[f];
    }
    out[SEALED] = sealed;
    this.sealed.set(rec, { stored: out, plain });
    return out;
  }

  /**
   * The in-memory form of a record read from disk. `clear` is true when a field that is sealed at
   * rest was stored in clear (written by an earlier version): the caller rewrites the snapshot so it
   * does not stay that way.
   */
  decode(c: string, stored: StoredRecord, source: string): { rec: StoredRecord; clear: boolean } {
    const fields = SEALED_FIELDS[c as CollectionName];
    if (!fields) return { rec: stored, clear: false };
    const sealed = stored[SEALED];
    if (sealed === undefined) return { rec: stored, clear: fields.some((f) => stored[f] !== undefined) };
    if (!sealed || typeof sealed !== 'object')
      throw new GpufleetError('INTERNAL', `${source}: ${c}/${stored.id} has a malformed ${SEALED} field`, { fields: { collection: c, id: stored.id } });
    const rec: StoredRecord = { ...stored };
    delete rec[SEALED];
    const plain: Record<string, string> = {};
    for (const [f, ciphertext] of Object.entries(sealed as Record<string, unknown>)) {
      try {
        if (typeof ciphertext !== 'string') throw new TypeError('not a string');
        plain[f] = this.box.open(ciphertext, `${c}/${stored.id}/${f}`);
        rec[f] = JSON.parse(plain[f]) as unknown;
      } catch (e) {
        throw new GpufleetError(
          'INTERNAL',
          `${source}: the sealed ${f} of ${c}/${stored.id} cannot be opened; secret.key must be the key this data was written with`,
          { cause: e, fields: { collection: c, id: stored.id, field: f } },
        );
      }
    }
    this.sealed.set(rec, { stored, plain });
    return { rec, clear: false };
  }
}
