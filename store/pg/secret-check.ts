// The database remembers which key seals its secrets without holding the key: a check value sealed
// with it (gf_meta 'secret_key_check'). The first replica writes it; every replica opens it at start
// and refuses to start when its GPUFLEET_SECRET_KEY does not, rather than seal new secrets under a
// second key and fail to open the old ones.
import type pg from 'pg';
import { GpufleetError } from '../../model/index.ts';
import type { SecretBox } from '../base/secret-box.ts';

const KEY = 'secret_key_check';
const PLAIN = 'gpufleet secret key check v1';
const CONTEXT = 'gf_meta/secret_key_check';

export async function checkSecretKey(pool: pg.Pool, box: SecretBox): Promise<void> {
  // the first writer wins; a replica with another key that raced it fails the check below
  await pool.query('INSERT INTO gf_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [KEY, box.seal(PLAIN, CONTEXT)]);
  const { rows } = await pool.query<{ value: string }>('SELECT value FROM gf_meta WHERE key = $1', [KEY]);
  const sealed = rows[0]?.value;
  let opened: string | null = null;
  try {
    opened = sealed === undefined ? null : box.open(sealed, CONTEXT);
  } catch {
    opened = null;
  }
  if (opened !== PLAIN)
    throw new GpufleetError(
      'INTERNAL',
      'GPUFLEET_SECRET_KEY does not open the secrets in this database: every replica must use the key the database was first started with; refusing to start',
      { fields: { check: 'secret_key' } },
    );
}
