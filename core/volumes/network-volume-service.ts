// Network volumes: persistent storage bound to one data center (docs/network-volumes.md). The record is
// the desired state; the bytes live under `volumeHostPath(id)` on the data center's shared storage.
// Storage accrues billing from create to delete (billing.ts accrueNetworkVolume).
import { GpufleetError } from '../../model/index.ts';
import type { NetworkVolumeRecord } from '../../model/index.ts';
import {
  networkVolumeCreateSchema,
  networkVolumeUpdateSchema,
  type NetworkVolumeCreateInput,
  type NetworkVolumeUpdateInput,
} from '../../model/index.ts';
import { check, compile, fail400, fail422 } from '../../model/index.ts';
import { newId } from '../accounts/index.ts';
import type { Store, StoreReader } from '../../store/index.ts';
import { accrueNetworkVolume, volumeRatePerHour } from '../billing/index.ts';
import type { Admission } from '../quotas/index.ts';
import { describeUser } from '../accounts/index.ts';
import type { Principal } from '../../model/index.ts';

const validateCreate = compile<NetworkVolumeCreateInput>(networkVolumeCreateSchema);
const validateUpdate = compile<NetworkVolumeUpdateInput>(networkVolumeUpdateSchema);

export interface NetworkVolumeListFilter {
  dataCenterId?: string;
  name?: string;
  tag?: Record<string, string>;
}

/** v1 calls the data center `dataCenterId`, v2 `dataCenter`: both are returned so either client reads it. */
export interface NetworkVolumeView {
  id: string;
  name: string;
  size: number;
  dataCenterId: string;
  dataCenter: string;
  type: NetworkVolumeRecord['type'];
  tags: Record<string, string>;
  createdAt: string;
}

export function toNetworkVolumeView(v: NetworkVolumeRecord): NetworkVolumeView {
  return { id: v.id, name: v.name, size: v.size, dataCenterId: v.dataCenterId, dataCenter: v.dataCenterId, type: v.type, tags: v.tags, createdAt: v.createdAt };
}

export function validateNetworkVolumeCreate(body: unknown): NetworkVolumeCreateInput & { dataCenterId: string } {
  const input = check(validateCreate, body, 'network volume');
  if (input.dataCenterId !== undefined && input.dataCenter !== undefined && input.dataCenterId !== input.dataCenter)
    fail422('network volume', ['$.dataCenter: names another data center than $.dataCenterId; send one of them']);
  const dataCenterId = input.dataCenterId ?? input.dataCenter;
  if (dataCenterId === undefined) fail422('network volume', ['$.dataCenterId: is required (or $.dataCenter)']);
  // one storage class: every volume lives on the data center's one shared mount
  if (input.type === 'HIGH_PERFORMANCE')
    fail400('HIGH_PERFORMANCE network volumes are not offered on this fleet; use STANDARD.', ['$.type: HIGH_PERFORMANCE is not offered']);
  return { ...input, dataCenterId };
}

/** A data center exists when at least one enrolled host is in it. */
export async function dataCenterExists(store: StoreReader, dataCenterId: string): Promise<boolean> {
  return (await store.list('hosts', { dataCenterId })).length > 0;
}

export class NetworkVolumeService {
  constructor(
    private readonly store: Store,
    /** per-account limits (core/quotas): volumeGb, spend per hour, the monthly budget */
    private readonly admission?: Admission,
  ) {}

  async create(principal: Principal, body: unknown): Promise<NetworkVolumeRecord> {
    // the schema check first (the same error createFromInput's would be), so the body is typed, not cast
    return this.createFromInput(principal, check(validateCreate, body, 'network volume'));
  }

  /** Shaped input (GraphQL, constructs); validated against the same schema. */
  async createFromInput(principal: Principal, input: NetworkVolumeCreateInput): Promise<NetworkVolumeRecord> {
    const checked = validateNetworkVolumeCreate(input);
    return this.store.transact(async (tx) => {
      if (!(await dataCenterExists(tx, checked.dataCenterId))) {
        const known = [...new Set((await tx.list('hosts')).map((h) => h.dataCenterId))].sort();
        const path = input.dataCenterId !== undefined ? '$.dataCenterId' : '$.dataCenter';
        fail422('network volume', [`${path}: unknown data center "${checked.dataCenterId}"; the fleet has ${known.join(', ') || 'no data centers yet'}`]);
      }
      const now = new Date().toISOString();
      const vol: NetworkVolumeRecord = {
        id: newId('vol_'),
        accountId: principal.accountId,
        name: checked.name,
        size: checked.size,
        dataCenterId: checked.dataCenterId,
        type: checked.type ?? 'STANDARD',
        tags: checked.tags ?? {},
        createdAt: now,
        updatedAt: now,
      };
      await this.admission?.admit(tx, { accountId: vol.accountId, what: 'network volume', volumeGb: vol.size, spendPerHour: volumeRatePerHour(vol.size) });
      tx.put('networkVolumes', vol);
      await accrueNetworkVolume(tx, null, vol, now);
      return vol;
    });
  }

  async get(principal: Principal, id: string): Promise<NetworkVolumeRecord> {
    return own(this.store, principal, id);
  }

  async list(principal: Principal, f: NetworkVolumeListFilter = {}): Promise<NetworkVolumeRecord[]> {
    return (await this.store.list('networkVolumes', { accountId: principal.accountId }))
      .filter(
        (v) =>
          (f.dataCenterId === undefined || v.dataCenterId === f.dataCenterId) &&
          (f.name === undefined || v.name === f.name) &&
          Object.entries(f.tag ?? {}).every(([k, val]) => v.tags[k] === val),
      )
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
  }

  /** PATCH {name, size, tags}: a volume may grow; shrinking could cut off data, so it is a 400. */
  async update(principal: Principal, id: string, body: unknown): Promise<NetworkVolumeRecord> {
    const input = check(validateUpdate, body, 'network volume update');
    return this.store.transact(async (tx) => {
      const vol = await own(tx, principal, id);
      if (input.size !== undefined && input.size < vol.size)
        throw new GpufleetError('VOLUME_SHRINK', `Network volume ${id} is ${vol.size} GB; it can grow but not shrink to ${input.size} GB.`, {
          errors: [`$.size: must be at least the current ${vol.size}`],
          fields: { size: vol.size, requested: input.size },
        });
      const now = new Date().toISOString();
      const next: NetworkVolumeRecord = {
        ...vol,
        name: input.name ?? vol.name,
        size: input.size ?? vol.size,
        tags: input.tags ?? vol.tags,
        updatedAt: now,
      };
      if (next.size > vol.size)
        await this.admission?.admit(tx, { accountId: vol.accountId, what: 'network volume growth', volumeGb: next.size - vol.size, spendPerHour: volumeRatePerHour(next.size - vol.size) });
      tx.put('networkVolumes', next);
      await accrueNetworkVolume(tx, vol, next, now);
      return next;
    });
  }

  /** 409 while a pod that is not terminated mounts it, or an endpoint's workers would. */
  async delete(principal: Principal, id: string): Promise<void> {
    await this.store.transact(async (tx) => {
      const vol = await own(tx, principal, id);
      const pod = (await tx.list('pods', { accountId: vol.accountId })).find(
        (p) => p.status !== 'TERMINATED' && p.mounts.network?.some((m) => m.volumeId === id),
      );
      const endpoint = (await tx.list('endpoints', { accountId: vol.accountId, networkVolumeId: id }))[0];
      const user = describeUser(principal, 'pod', pod) ?? describeUser(principal, 'endpoint', endpoint);
      if (user)
        throw new GpufleetError('IN_USE', `Network volume ${id} is in use by ${user}; terminate it or detach the volume first.`, {
          fields: { networkVolumeId: id },
        });
      tx.delete('networkVolumes', id);
      await accrueNetworkVolume(tx, vol, null, new Date().toISOString());
    });
  }
}

async function own(store: StoreReader, principal: Principal, id: string): Promise<NetworkVolumeRecord> {
  const vol = await store.get('networkVolumes', id);
  if (!vol || vol.accountId !== principal.accountId) throw new GpufleetError('NOT_FOUND', `Network volume ${id} was not found.`);
  return vol;
}
