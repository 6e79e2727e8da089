// The base of every gpufleet construct: a null_resource whose `triggers` hold the canonical spec and
// whose local-exec provisioners call the gpufleet CLI, so plain Terraform could apply the synth
// output too. The spec is validated at synth with the same validators (and messages) as the API.
import { TerraformStack, Token, Tokenization, type IResolvable, type IResolveContext } from 'cdktf';
import { provider as nullProvider, resource as nullResource } from '@cdktf/provider-null';
import type { Construct } from 'constructs';
import { canonicalJson, isGpufleetError } from '../../model/index.ts';
import { escapeTemplate, refString, specHash } from '../contract/spec-codec.ts';
import { OWNER_TAG_PREFIX } from '../contract/ownership.ts';
import { TRIGGER, type ResourceKind } from '../contract/triggers.ts';


/** Stands in for a reference while validating: the referenced resource has no id before apply. */
export const REF_PLACEHOLDER = 'ref-placeholder';

/** Who a reference token points at, so a construct can depend on what its props mention. */
const refOwners = new WeakMap<IResolvable, GpufleetResource>();

class IdReference implements IResolvable {
  readonly creationStack: string[] = [];
  constructor(private readonly target: GpufleetResource) {}
  resolve(_ctx: IResolveContext): string {
    return refString(`null_resource.${this.target.friendlyUniqueId}`);
  }
  toString(): string {
    return Token.asString(this);
  }
}

export interface KindSpecValidator {
  /** throws the API's GpufleetError for a body the API would refuse */
  (spec: unknown): void;
}

export abstract class GpufleetResource extends nullResource.Resource {
  readonly kind: ResourceKind;
  /** path below the stack: the `gpufleet:path` tag and the CLI's construct path */
  readonly resourcePath: string;
  private readonly spec: Record<string, unknown>;
  private idToken?: string;

  protected constructor(scope: Construct, id: string, kind: ResourceKind, spec: object, validate: KindSpecValidator) {
    super(scope, id, {});
    const stack = TerraformStack.of(this);
    ensureNullProvider(stack);
    this.kind = kind;
    this.resourcePath = this.node.path.slice(stack.node.path.length + 1);
    this.spec = { ...(spec as Record<string, unknown>) };
    const deps = referencedResources(this.spec);
    if (deps.length) this.dependsOn = deps.map((d) => d.fqn);
    this.triggers = {
      [TRIGGER.kind]: kind,
      [TRIGGER.path]: this.resourcePath,
      [TRIGGER.spec]: Token.asString({ creationStack: [], resolve: (ctx) => this.specTrigger(ctx) } satisfies IResolvable),
      [TRIGGER.hash]: Token.asString({ creationStack: [], resolve: (ctx) => specHash(this.specTrigger(ctx)) } satisfies IResolvable),
    };
    if (kind !== 'registry-ref') this.provisioners = cliProvisioners(this.resourcePath);
    this.node.addValidation({
      validate: () => [
        ...deps.filter((d) => TerraformStack.of(d) !== stack).map((d) => `refers to ${d.node.path}, which is in another stack`),
        ...this.validateSpec(validate),
      ],
    });
  }

  /**
   * The gpufleet id of this resource. In the synth output it is the reference
   * `${null_resource.<name>.id}`; `gpufleet apply` resolves it to the real id, in dependency order.
   */
  override get id(): string {
    if (!this.idToken) {
      const ref = new IdReference(this);
      refOwners.set(ref, this);
      this.idToken = Token.asString(ref);
    }
    return this.idToken;
  }

  /** The spec as canonical JSON, references resolved to `${null_resource.x.id}`, escaped for Terraform. */
  private specTrigger(ctx: IResolveContext): string {
    const resolved = ctx.resolve(this.spec) as unknown;
    return escapeTemplate(canonicalJson(resolved));
  }

  private validateSpec(validate: KindSpecValidator): string[] {
    const body = withPlaceholders(this.spec) as Record<string, unknown>;
    const tags = body.tags;
    const reserved =
      tags && typeof tags === 'object' ? Object.keys(tags).filter((k) => k.startsWith(OWNER_TAG_PREFIX)) : [];
    if (reserved.length) return reserved.map((k) => `$.tags[${JSON.stringify(k)}]: the gpufleet: prefix is reserved for ownership tags`);
    try {
      validate(body);
      return [];
    } catch (e) {
      if (!isGpufleetError(e)) throw e;
      // the API's answer, word for word: code, status, detail and each JSONPath line
      const lines = e.errors?.length ? e.errors : [];
      return [`${e.code} (${e.status}): ${e.message}`, ...lines.map((l) => `  ${l}`)];
    }
  }
}

function ensureNullProvider(stack: TerraformStack): void {
  if (!stack.node.tryFindChild('gpufleet-null')) new nullProvider.NullProvider(stack, 'gpufleet-null');
}

/** Terraform fallback: each resource reconciles itself through the CLI (see docs/declarative.md). */
function cliProvisioners(path: string): nullResource.Resource['provisioners'] {
  const target = `--tf-json cdk.tf.json --resource '${path}' --auto-approve --no-lock`;
  return [
    { type: 'local-exec', command: `npx gpufleet apply ${target}` },
    {
      type: 'local-exec',
      when: 'destroy',
      // Terraform replaces a null_resource whenever its triggers change; passing the old hash lets
      // the CLI tell an update (spec changed: leave the resource for the create step) from a destroy.
      command: `npx gpufleet destroy ${target} --tf-replaced-hash \${self.triggers.${TRIGGER.hash}}`,
    },
  ];
}

function forEachString(value: unknown, fn: (s: string) => void): void {
  if (typeof value === 'string') fn(value);
  else if (Array.isArray(value)) value.forEach((v) => forEachString(v, fn));
  else if (value && typeof value === 'object') Object.values(value).forEach((v) => forEachString(v, fn));
}

function referencedResources(spec: unknown): GpufleetResource[] {
  const out: GpufleetResource[] = [];
  forEachString(spec, (s) => {
    for (const t of Tokenization.reverseString(s).tokens) {
      const owner = refOwners.get(t);
      if (owner && !out.includes(owner)) out.push(owner);
    }
  });
  return out;
}

function withPlaceholders(value: unknown): unknown {
  if (typeof value === 'string') return Token.isUnresolved(value) ? REF_PLACEHOLDER : value;
  if (Array.isArray(value)) return value.map(withPlaceholders);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withPlaceholders(v)]));
  return value;
}
