// The account's SSH public keys (docs/connect.md, "SSH"): GraphQL `updateUserSettings(input:
// {pubKey})` sets them as one text (runpodctl joins keys with blank lines), REST GET/PUT
// /v2/account/ssh-keys as a list. They reach each pod the account starts as its PUBLIC_KEY variable
// (provisioner/container-spec.ts), the public cloud's convention that images running sshd read.
import { fail422, GpufleetError, type AccountRecord, type Principal } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';

const MAX_PUBKEY = 65536;
const MAX_KEYS = 100;
/** `<type> <base64>[ comment]`: what authorized_keys accepts, loosely; one line */
const OPENSSH_KEY = /^(ssh-[a-z0-9-]+|ecdsa-sha2-[a-z0-9-]+|sk-[a-z0-9-@.]+)\s+[A-Za-z0-9+/]+={0,3}(\s[^\r\n]*)?$/;

/** The keys of a pubKey text, one a line, blank lines dropped. */
export const sshKeyList = (pubKey: string): string[] => pubKey.split('\n').map((l) => l.trim()).filter((l) => l !== '');

/** 422 unless every non-blank line is an OpenSSH public key; `field` names the input in the errors. */
export function checkPubKey(pubKey: string, field = '$.input.pubKey'): void {
  if (pubKey.length > MAX_PUBKEY) fail422('user settings', [`${field}: must be at most ${MAX_PUBKEY} characters`]);
  const bad = pubKey
    .split('\n')
    .map((l, i) => [l.trim(), i + 1] as const)
    .filter(([l]) => l !== '' && !OPENSSH_KEY.test(l));
  if (bad.length) fail422('user settings', bad.map(([, n]) => `${field}: line ${n} is not an OpenSSH public key`));
}

/** `{keys: [...]}` as PUT /v2/account/ssh-keys takes it: the text the account stores (one key a line) */
export function pubKeyFromList(body: unknown): string {
  const keys = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { keys?: unknown }).keys : undefined;
  const extra = typeof body === 'object' && body !== null ? Object.keys(body).filter((k) => k !== 'keys') : [];
  if (!Array.isArray(keys) || extra.length) fail422('SSH keys', ['$.keys: must be an array of OpenSSH public keys (and the only field)']);
  if (keys.length > MAX_KEYS) fail422('SSH keys', [`$.keys: at most ${MAX_KEYS} keys`]);
  const errors = keys.flatMap((k, i) => (typeof k === 'string' && OPENSSH_KEY.test(k.trim()) ? [] : [`$.keys[${i}]: is not an OpenSSH public key (one line)`]));
  if (errors.length) fail422('SSH keys', errors);
  const text = (keys as string[]).map((k) => k.trim()).join('\n');
  if (text.length > MAX_PUBKEY) fail422('SSH keys', [`$.keys: at most ${MAX_PUBKEY} characters in all`]);
  return text;
}

export class AccountSshKeys {
  constructor(private readonly store: Store) {}

  async account(principal: Principal): Promise<AccountRecord> {
    const a = await this.store.get('accounts', principal.accountId);
    if (!a) throw new GpufleetError('NOT_FOUND', `Account ${principal.accountId} was not found.`);
    return a;
  }

  /** sets the account's keys to `pubKey` (checked by the caller: checkPubKey or pubKeyFromList) */
  set(principal: Principal, pubKey: string): Promise<AccountRecord> {
    return this.store.transact(async (tx) => {
      const a = await tx.get('accounts', principal.accountId);
      if (!a) throw new GpufleetError('NOT_FOUND', `Account ${principal.accountId} was not found.`);
      const next = { ...a, pubKey };
      tx.put('accounts', next);
      return next;
    });
  }
}
