// The public model catalog (docs/public-endpoints.md): operators publish one of their QUEUE endpoints
// under a slug with a price; every account lists it and calls the model by the slug on the job
// interface. Slugs that are route names under /v2 are refused: the list comes from the server's own
// route table (`useReservedNames`), so a route added later is covered without editing a list here.
import { check, compile, GpufleetError, publicEndpointCreateSchema, type PricingUnit, type PublicEndpointCreateInput, type PublicEndpointRecord } from '../../model/index.ts';
import type { Store } from '../../store/index.ts';
import { costMicros, maxUnitsPerJob } from '../billing/index.ts';
import type { Principal } from '../../model/index.ts';

const validateCreate = compile<PublicEndpointCreateInput>(publicEndpointCreateSchema);

/** An entry as the API answers it; `endpointId` only for operators. */
export interface PublicEndpointView {
  id: string;
  slug: string;
  name: string;
  description: string;
  pricing: { unit: PricingUnit; usdPerUnit: number; maxUnitsPerJob?: number };
  createdAt: string;
  endpointId?: string;
}

export function toPublicEndpointView(rec: PublicEndpointRecord, principal: Pick<Principal, 'operator'>): PublicEndpointView {
  return {
    id: rec.id,
    slug: rec.id,
    name: rec.name,
    description: rec.description,
    pricing: { unit: rec.pricing.unit, usdPerUnit: rec.pricing.usdPerUnit, ...(maxUnitsPerJob(rec) !== undefined ? { maxUnitsPerJob: maxUnitsPerJob(rec)! } : {}) },
    createdAt: rec.createdAt,
    ...(principal.operator ? { endpointId: rec.endpointId } : {}),
  };
}

export class PublicEndpointCatalog {
  private reserved: () => Iterable<string> = () => [];

  constructor(
    private readonly store: Store,
    private readonly clock: () => number = Date.now,
  ) {}

  /** the first path segments the API serves under /v2 (read at each publish, so it is the whole table) */
  useReservedNames(names: () => Iterable<string>): void {
    this.reserved = names;
  }

  async create(principal: Principal, body: unknown): Promise<PublicEndpointView> {
    const input = check(validateCreate, body, 'public endpoint');
    const slug = input.slug;
    if (new Set(this.reserved()).has(slug))
      throw new GpufleetError('VALIDATION_FAILED', `The slug ${slug} is a route name of this API (/v2/${slug}); choose another.`, {
        errors: [`$.slug: ${slug} is a route name of this API`],
      });
    const { unit, usdPerUnit, maxUnitsPerJob: maxUnits } = input.pricing;
    // every job of another account holds its most possible cost, so that most must be known
    if (maxUnits === undefined && unit !== 'request')
      throw new GpufleetError('VALIDATION_FAILED', `pricing.maxUnitsPerJob is required for unit ${unit}: a caller's job holds maxUnitsPerJob × usdPerUnit of their credits until it ends.`, {
        errors: [`$.pricing.maxUnitsPerJob: is required for unit "${unit}"`],
      });
    if (!Number.isSafeInteger(costMicros(maxUnits ?? 1, usdPerUnit)))
      throw new GpufleetError('VALIDATION_FAILED', 'maxUnitsPerJob × usdPerUnit is more than a job may cost.', { errors: ['$.pricing.maxUnitsPerJob: maxUnitsPerJob × usdPerUnit is more than a job may cost'] });
    const rec = await this.store.transact(async (tx) => {
      if (await tx.get('publicEndpoints', slug)) throw new GpufleetError('CONFLICT', `The slug ${slug} is already published.`, { fields: { slug } });
      if (await tx.get('endpoints', slug))
        throw new GpufleetError('CONFLICT', `The slug ${slug} is the id of an existing endpoint; choose another.`, { fields: { slug } });
      const endpoint = await tx.get('endpoints', input.endpointId);
      if (!endpoint || endpoint.accountId !== principal.accountId)
        throw new GpufleetError('NOT_FOUND', `Endpoint ${input.endpointId} was not found in this account.`, { fields: { endpointId: input.endpointId } });
      if (endpoint.type !== 'QUEUE')
        throw new GpufleetError('BAD_REQUEST', `Endpoint ${endpoint.id} is a ${endpoint.type} endpoint; a public model runs on a QUEUE endpoint.`, {
          fields: { endpointId: endpoint.id, type: endpoint.type },
        });
      const [taken] = await tx.list('publicEndpoints', { endpointId: endpoint.id });
      if (taken)
        throw new GpufleetError('CONFLICT', `Endpoint ${endpoint.id} is already published as ${taken.id}; an endpoint backs one slug.`, {
          fields: { endpointId: endpoint.id, slug: taken.id },
        });
      const next: PublicEndpointRecord = {
        id: slug,
        accountId: principal.accountId,
        endpointId: endpoint.id,
        name: input.name,
        description: input.description ?? '',
        pricing: { unit, usdPerUnit, ...(maxUnits !== undefined ? { maxUnitsPerJob: maxUnits } : {}) },
        createdAt: new Date(this.clock()).toISOString(),
      };
      tx.put('publicEndpoints', next);
      return next;
    });
    return toPublicEndpointView(rec, principal);
  }

  async list(principal: Principal): Promise<PublicEndpointView[]> {
    const all = await this.store.list('publicEndpoints');
    return all.map((r) => toPublicEndpointView(r, principal)).sort((a, b) => (a.slug < b.slug ? -1 : a.slug > b.slug ? 1 : 0));
  }

  async get(principal: Principal, slug: string): Promise<PublicEndpointView> {
    const rec = await this.store.get('publicEndpoints', slug);
    if (!rec) throw notFound(slug);
    return toPublicEndpointView(rec, principal);
  }

  async delete(_principal: Principal, slug: string): Promise<void> {
    await this.store.transact(async (tx) => {
      if (!(await tx.get('publicEndpoints', slug))) throw notFound(slug);
      tx.delete('publicEndpoints', slug);
    });
  }

  /** the backing endpoint was deleted: its entries go with it */
  async endpointDeleted(endpointId: string): Promise<void> {
    await this.store.transact(async (tx) => {
      for (const rec of await tx.list('publicEndpoints', { endpointId })) tx.delete('publicEndpoints', rec.id);
    });
  }

  /** every entry (the sweep of charges walks the endpoints behind them) */
  entries(): Promise<PublicEndpointRecord[]> {
    return this.store.list('publicEndpoints');
  }

  /** the entry an endpoint backs, if any (a job's result finds its price this way) */
  async forEndpoint(endpointId: string): Promise<PublicEndpointRecord | undefined> {
    const [rec] = await this.store.list('publicEndpoints', { endpointId });
    return rec;
  }
}

function notFound(slug: string): GpufleetError {
  return new GpufleetError('NOT_FOUND', `No public endpoint has the slug ${slug}.`, { fields: { slug } });
}
