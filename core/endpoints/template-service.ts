// Templates: reusable pod/endpoint configuration (v2 `Template`). Pods copy a template's fields at
// creation (pod-builder.ts), so editing a template never changes a running pod; endpoints of the
// template's account follow it live (an edit rolls their workers), which is why a template in use
// cannot be deleted. Endpoints of other accounts on a public template run it as it was when they
// chose it (template-pins.ts): its owner's edits never reach them. Other accounts never see a public
// template's env values (docs/templates.md, "Public templates").
import { GpufleetError } from '../../model/index.ts';
import type { TemplateRecord } from '../../model/index.ts';
import { checkPortRanges } from '../../model/index.ts';
import {
  TEMPLATE_DEFAULTS,
  templateCreateSchema,
  templateUpdateSchema,
  type TemplateCreateInput,
  type TemplateUpdateInput,
} from '../../model/index.ts';
import { check, compile, fail422 } from '../../model/index.ts';
import { checkTemplateRegistry } from '../../model/index.ts';
import { newId } from '../accounts/index.ts';
import { describeUser } from '../accounts/index.ts';
import type { Store, StoreTx } from '../../store/index.ts';
import { checkRegistry } from '../images/index.ts';
import { TEMPLATE_WORKER_FIELDS } from './template-pins.ts';
import { checkImageRegistry } from '../images/index.ts';
import type { Principal } from '../../model/index.ts';

const validateCreate = compile<TemplateCreateInput>(templateCreateSchema);
const validateUpdate = compile<TemplateUpdateInput>(templateUpdateSchema);

export interface TemplateListFilter {
  /** also list other accounts' public templates */
  includePublic?: boolean;
  name?: string;
  tag?: Record<string, string>;
}

export type TemplateView = Omit<TemplateRecord, 'accountId'>;

export function toTemplateView(t: TemplateRecord): TemplateView {
  const { accountId: _owner, ...view } = t;
  return view;
}

export function validateTemplateCreate(body: unknown): TemplateCreateInput {
  const input = check(validateCreate, body, 'template');
  const errors = checkPortRanges(input.ports);
  if (errors.length) fail422('template', errors);
  return input;
}

export function validateTemplateUpdate(body: unknown): TemplateUpdateInput {
  const input = check(validateUpdate, body, 'template update');
  const errors = checkPortRanges(input.ports);
  if (errors.length) fail422('template update', errors);
  return input;
}

export class TemplateService {
  constructor(
    private readonly store: Store,
    /** GPUFLEET_ALLOWED_REGISTRIES: registries an image may name beyond the public ones (image-policy.ts) */
    private readonly allowedRegistries: readonly string[] = [],
  ) {}

  async create(principal: Principal, body: unknown): Promise<TemplateRecord> {
    return this.createFromInput(principal, validateTemplateCreate(body));
  }

  /** For inputs another interface already shaped (GraphQL saveTemplate, constructs); the same limits apply. */
  async createFromInput(principal: Principal, input: TemplateCreateInput): Promise<TemplateRecord> {
    const checked = validateTemplateCreate(input);
    return this.store.transact((tx) => this.createIn(tx, principal, checked));
  }

  async createIn(tx: StoreTx, principal: Principal, input: TemplateCreateInput): Promise<TemplateRecord> {
    checkImageRegistry(input.image, this.allowedRegistries, 'template');
    const now = new Date().toISOString();
    const t: TemplateRecord = {
      id: newId('tpl_'),
      accountId: principal.accountId,
      name: input.name,
      image: input.image,
      args: input.args ?? TEMPLATE_DEFAULTS.args,
      disk: input.disk ?? TEMPLATE_DEFAULTS.disk,
      ports: input.ports ?? [],
      env: input.env ?? {},
      registry: await checkRegistry(tx, principal, input.registry ?? null),
      mounts: input.mounts?.persistent ? { persistent: input.mounts.persistent } : {},
      serverless: input.serverless ?? TEMPLATE_DEFAULTS.serverless,
      public: input.public ?? TEMPLATE_DEFAULTS.public,
      category: input.category ?? TEMPLATE_DEFAULTS.category,
      startSsh: input.startSsh ?? TEMPLATE_DEFAULTS.startSsh,
      startJupyter: input.startJupyter ?? TEMPLATE_DEFAULTS.startJupyter,
      allowedCudaVersions: input.allowedCudaVersions ?? [],
      readme: input.readme ?? TEMPLATE_DEFAULTS.readme,
      tags: input.tags ?? {},
      createdAt: now,
      updatedAt: now,
    };
    await assertRules(tx, t);
    tx.put('templates', t);
    return t;
  }

  /** The caller's template, or another account's public one (pods may be created from it), its env values hidden. */
  async get(principal: Principal, id: string): Promise<TemplateRecord> {
    const t = await this.store.get('templates', id);
    if (!t || (t.accountId !== principal.accountId && !t.public)) throw notFound(id);
    return seenBy(principal, t);
  }

  async list(principal: Principal, f: TemplateListFilter = {}): Promise<TemplateRecord[]> {
    const own = await this.store.list('templates', { accountId: principal.accountId });
    const others = f.includePublic ? (await this.store.list('templates', { public: true })).filter((t) => t.accountId !== principal.accountId).map((t) => seenBy(principal, t)) : [];
    return [...own, ...others]
      .filter((t) => (f.name === undefined || t.name === f.name) && Object.entries(f.tag ?? {}).every(([k, v]) => t.tags[k] === v))
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
  }

  /** PATCH: only the fields sent change. Other accounts' templates, public or not, are 404 here. */
  async update(principal: Principal, id: string, body: unknown): Promise<TemplateRecord> {
    const input = validateTemplateUpdate(body);
    checkImageRegistry(input.image, this.allowedRegistries, 'template update');
    return this.store.transact(async (tx) => {
      const t = await ownTemplate(tx, principal, id);
      const next: TemplateRecord = { ...t, updatedAt: new Date().toISOString() };
      for (const k of ['name', 'image', 'args', 'disk', 'ports', 'env', 'serverless', 'public', 'category', 'startSsh', 'startJupyter', 'allowedCudaVersions', 'readme', 'tags'] as const)
        if (input[k] !== undefined) (next as Record<typeof k, unknown>)[k] = input[k];
      if (input.registry !== undefined) next.registry = await checkRegistry(tx, principal, input.registry);
      if (input.mounts !== undefined) next.mounts = input.mounts.persistent ? { persistent: input.mounts.persistent } : {};
      await assertRules(tx, next);
      tx.put('templates', next);
      // what a worker's container is made of changed: this account's endpoints on it roll their workers;
      // other accounts' endpoints run their pin (template-pins.ts) until they choose the template again
      if (WORKER_FIELDS.some((k) => JSON.stringify(t[k]) !== JSON.stringify(next[k])))
        for (const e of await tx.list('endpoints', { templateId: id }))
          if (e.accountId === t.accountId && !e.templatePin) tx.put('endpoints', { ...e, version: e.version + 1, updatedAt: next.updatedAt });
      return next;
    });
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.store.transact(async (tx) => {
      await ownTemplate(tx, principal, id);
      // any account: a public template may back other accounts' pods and endpoints
      const pod = (await tx.list('pods', { template: id })).find((p) => p.status !== 'TERMINATED');
      const endpoint = (await tx.list('endpoints', { templateId: id }))[0];
      const user = describeUser(principal, 'pod', pod) ?? describeUser(principal, 'endpoint', endpoint);
      if (user)
        throw new GpufleetError('IN_USE', `Template ${id} is in use by ${user}; terminate or repoint it first.`, {
          fields: { templateId: id },
        });
      tx.delete('templates', id);
    });
  }
}

/** Template fields a serverless worker is built from (core/workers/worker-record.ts). */
const WORKER_FIELDS = TEMPLATE_WORKER_FIELDS;

/** another account's public template as the caller sees it: without its env (values may be its owner's secrets) */
function seenBy(principal: Principal, t: TemplateRecord): TemplateRecord {
  if (t.accountId === principal.accountId) return t;
  return { ...t, env: {} };
}

async function ownTemplate(tx: StoreTx, principal: Principal, id: string): Promise<TemplateRecord> {
  const t = await tx.get('templates', id);
  if (!t || t.accountId !== principal.accountId) throw notFound(id);
  return t;
}

/** Rules across fields and records: unique name per account; no registry secrets behind a public template. */
async function assertRules(tx: StoreTx, t: TemplateRecord): Promise<void> {
  checkTemplateRegistry(t);
  const clash = (await tx.list('templates', { accountId: t.accountId, name: t.name })).find((o) => o.id !== t.id);
  if (clash)
    throw new GpufleetError('CONFLICT', `A template named "${t.name}" already exists in this account (${clash.id}).`, {
      errors: ['$.name: must be unique within the account'],
    });
}

function notFound(id: string): GpufleetError {
  return new GpufleetError('NOT_FOUND', `Template ${id} was not found.`);
}
