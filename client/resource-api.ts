// What every resource group of the public API has in common: `GET <path>` (a list, wrapped in an
// object under `listKey` or not), `GET|PATCH|DELETE <path>/{id}`, `POST <path>`. The typed groups
// (resources.ts, pods.ts, endpoints.ts) extend it.
import type { ApiClient } from './api-client.ts';

/** a resource as the API shows it: an id and its other fields */
export interface ResourceView {
  id: string;
  [field: string]: unknown;
}

/** query parameters; undefined ones are left out */
export type Query = Record<string, string | number | boolean | undefined>;

/** `?a=1&b=2` of the defined values, or '' */
export function queryString(query: Query = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

export class ResourceApi<View = ResourceView, Create = Record<string, unknown>, Update = Record<string, unknown>> {
  constructor(
    protected readonly client: ApiClient,
    /** e.g. `/v2/templates` */
    readonly path: string,
    /** the list answer's key holding the array (`templates`), or null when the answer is the array */
    private readonly listKey: string | null,
  ) {}

  /** the path of one resource */
  protected one(id: string, suffix = ''): string {
    return `${this.path}/${encodeURIComponent(id)}${suffix}`;
  }

  async list(query?: Query): Promise<View[]> {
    const answer = await this.client.get<Record<string, View[]> | View[]>(this.path + queryString(query));
    return this.listKey === null ? (answer as View[]) : (answer as Record<string, View[]>)[this.listKey]!;
  }

  get(id: string): Promise<View> {
    return this.client.get<View>(this.one(id));
  }

  create(input: Create): Promise<View> {
    return this.client.post<View>(this.path, input);
  }

  update(id: string, input: Update): Promise<View> {
    return this.client.patch<View>(this.one(id), input);
  }

  delete(id: string): Promise<void> {
    return this.client.delete(this.one(id));
  }
}
