// Container registry credentials for private images. The password is sealed (AES-256-GCM, bound to
// the record id) before it reaches the store, and only `credentials()` opens it, for the provisioner's
// `docker login`. Every other method returns `{id, name}`, like the public v1 and v2 APIs.
import { GpufleetError } from '../../model/index.ts';
import type { RegistryRecord } from '../../model/index.ts';
import {
  registryCreateSchema,
  registryUpdateSchema,
  type RegistryCreateInput,
  type RegistryUpdateInput,
} from '../../model/index.ts';
import { check, compile } from '../../model/index.ts';
import { newId } from '../accounts/index.ts';
import type { SecretBox } from '../../store/index.ts';
import type { Store, StoreReader } from '../../store/index.ts';
import { describeUser } from '../accounts/index.ts';
import type { Principal } from '../../model/index.ts';

const validateCreate = compile<RegistryCreateInput>(registryCreateSchema);
const validateUpdate = compile<RegistryUpdateInput>(registryUpdateSchema);

/** What any interface may show of a credential. */
export interface RegistryView {
  id: string;
  name: string;
}

export function toRegistryView(r: RegistryRecord): RegistryView {
  return { id: r.id, name: r.name };
}

export class RegistryService {
  constructor(
    private readonly store: Store,
    private readonly box: SecretBox,
  ) {}

  async create(principal: Principal, body: unknown): Promise<RegistryView> {
    const input = check(validateCreate, body, 'registry credential');
    return this.store.transact(async (tx) => {
      const clash = (await tx.list('registries', { accountId: principal.accountId, name: input.name }))[0];
      if (clash)
        throw new GpufleetError('CONFLICT', `A registry credential named "${input.name}" already exists (${clash.id}).`, {
          errors: ['$.name: must be unique within the account'],
        });
      const now = new Date().toISOString();
      const id = newId('reg_');
      const rec: RegistryRecord = {
        id,
        accountId: principal.accountId,
        name: input.name,
        username: input.username,
        passwordEnc: this.box.seal(input.password, id),
        createdAt: now,
        updatedAt: now,
      };
      tx.put('registries', rec);
      return toRegistryView(rec);
    });
  }

  async get(principal: Principal, id: string): Promise<RegistryView> {
    return toRegistryView(await own(this.store, principal.accountId, id));
  }

  async list(principal: Principal): Promise<RegistryView[]> {
    return (await this.store.list('registries', { accountId: principal.accountId }))
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1))
      .map(toRegistryView);
  }

  /** Rotates the username and/or password; pods pick it up at their next image pull. */
  async update(principal: Principal, id: string, body: unknown): Promise<RegistryView> {
    const input = check(validateUpdate, body, 'registry credential update');
    return this.store.transact(async (tx) => {
      const rec = await own(tx, principal.accountId, id);
      const next: RegistryRecord = {
        ...rec,
        username: input.username ?? rec.username,
        passwordEnc: input.password !== undefined ? this.box.seal(input.password, id) : rec.passwordEnc,
        updatedAt: new Date().toISOString(),
      };
      tx.put('registries', next);
      return toRegistryView(next);
    });
  }

  /** 409 while a pod that is not terminated, or a template, pulls with it. */
  async delete(principal: Principal, id: string): Promise<void> {
    await this.store.transact(async (tx) => {
      await own(tx, principal.accountId, id);
      const pod = (await tx.list('pods', { accountId: principal.accountId, registry: id })).find((p) => p.status !== 'TERMINATED');
      const template = (await tx.list('templates', { accountId: principal.accountId, registry: id }))[0];
      const user = describeUser(principal, 'pod', pod) ?? describeUser(principal, 'template', template);
      if (user)
        throw new GpufleetError('IN_USE', `Registry credential ${id} is in use by ${user}; change its registry first.`, {
          fields: { registryId: id },
        });
      tx.delete('registries', id);
    });
  }

  /** The plaintext credential, for the provisioner only. Never log or return it from an API. */
  async credentials(accountId: string, id: string): Promise<{ username: string; password: string }> {
    const rec = await own(this.store, accountId, id);
    return { username: rec.username, password: this.box.open(rec.passwordEnc, rec.id) };
  }
}

async function own(store: StoreReader, accountId: string, id: string): Promise<RegistryRecord> {
  const rec = await store.get('registries', id);
  if (!rec || rec.accountId !== accountId) throw new GpufleetError('NOT_FOUND', `Registry credential ${id} was not found.`);
  return rec;
}
