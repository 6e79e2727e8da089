// Secrets at rest (registry passwords, host keys, and through the store's record codec env values):
// AES-256-GCM under one 32-byte key kept beside the store as
// `<dataDir>/secret.key` (mode 0600). The store and its journal only ever hold ciphertext, so a copy of
// the data directory without the key file reveals no secret. Losing the key loses the secrets, not
// the rest of the state: affected credentials must be re-entered (docs/registries.md).
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { GpufleetError } from '../../model/index.ts';

export const SECRET_KEY_FILE = 'secret.key';
const KEY_BYTES = 32;
const IV_BYTES = 12; // the GCM nonce size that needs no extra hashing
const TAG_BYTES = 16;
const VERSION = 'v1';

export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  /** A box over a given key (tests); production uses `load`. */
  static fromKey(key: Buffer): SecretBox {
    if (key.length !== KEY_BYTES) throw new GpufleetError('INTERNAL', `a secret key must be ${KEY_BYTES} bytes, not ${key.length}`);
    return new SecretBox(Buffer.from(key));
  }

  /** Reads `<dataDir>/secret.key`, creating it (0600, exclusive) on first start. */
  static async load(dataDir: string): Promise<SecretBox> {
    const file = path.join(dataDir, SECRET_KEY_FILE);
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    try {
      // `wx`: two processes starting on one fresh data dir cannot both write a key; a umask can
      // only narrow 0600
      await writeFile(file, randomBytes(KEY_BYTES), { mode: 0o600, flag: 'wx' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw new GpufleetError('INTERNAL', `cannot create ${file}`, { cause: e });
    }
    let key: Buffer;
    try {
      key = await readFile(file);
    } catch (e) {
      throw new GpufleetError('INTERNAL', `cannot read ${file}`, { cause: e });
    }
    if (key.length !== KEY_BYTES)
      throw new GpufleetError('INTERNAL', `${file} must hold exactly ${KEY_BYTES} bytes (it holds ${key.length}); refusing to start`);
    return new SecretBox(key);
  }

  /**
   * A 32-byte key for one purpose (HKDF-SHA256 over secret.key, the purpose as `info`): signing keys
   * that live and rotate with secret.key, are the same on every control plane sharing it, are never
   * written anywhere, and reveal nothing of secret.key or of each other (docs/media.md).
   */
  deriveKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `gpufleet/${purpose}`, KEY_BYTES));
  }

  /**
   * Encrypts `plain`. `context` (e.g. the owning record's id) is bound as additional data, so a
   * ciphertext copied into another record does not open there.
   */
  seal(plain: string, context = ''): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
  }

  open(sealed: string, context = ''): string {
    const [version, payload] = sealed.split('.', 2);
    const raw = version === VERSION && payload !== undefined ? Buffer.from(payload, 'base64url') : Buffer.alloc(0);
    if (raw.length < IV_BYTES + TAG_BYTES) throw new GpufleetError('INTERNAL', 'a stored secret is malformed');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch (e) {
      // never include the ciphertext or the key in the message
      throw new GpufleetError('INTERNAL', 'a stored secret cannot be decrypted (was secret.key replaced?)', { cause: e });
    }
  }
}
