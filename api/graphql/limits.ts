// Request limits checked while the document is validated, before anything runs: nesting depth and
// alias count (aliases are how one request would otherwise multiply work: `a1: pod(…) a2: pod(…) …`).
// The parser's token cap (MAX_TOKENS) bounds the document itself. What an operation costs against the
// rate limit is counted here too (operationCost).
import { GraphQLError, Kind, getOperationAST, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode, type ValidationRule } from 'graphql';

/** runpod-python's deepest query (`myself { pods { runtime { ports { ip } } } }`) is 5 levels. */
export const MAX_DEPTH = 8;
export const MAX_ALIASES = 30;
export const MAX_TOKENS = 10_000;

const limitError = (message: string, node?: GraphQLError['nodes']) =>
  new GraphQLError(message, { ...(node ? { nodes: node } : {}), extensions: { code: 'BAD_REQUEST' } });

/** Fields nested more than `max` levels (top-level fields are level 1; fragments add no level of their own). */
export function depthLimit(max: number): ValidationRule {
  return (context) => {
    const fragmentDepth = new Map<string, number>();
    const depthOf = (set: SelectionSetNode | undefined, visiting: Set<string>): number => {
      let depth = 0;
      for (const sel of set?.selections ?? []) {
        if (sel.kind === Kind.FIELD) depth = Math.max(depth, 1 + depthOf(sel.selectionSet, visiting));
        else if (sel.kind === Kind.INLINE_FRAGMENT) depth = Math.max(depth, depthOf(sel.selectionSet, visiting));
        else {
          const name = sel.name.value;
          let d = fragmentDepth.get(name);
          if (d === undefined) {
            const fragment = context.getFragment(name);
            // unknown and cyclic fragments are reported by the standard rules
            if (!fragment || visiting.has(name)) d = 0;
            else {
              visiting.add(name);
              d = depthOf(fragment.selectionSet, visiting);
              visiting.delete(name);
              fragmentDepth.set(name, d);
            }
          }
          depth = Math.max(depth, d);
        }
      }
      return depth;
    };
    return {
      OperationDefinition(node) {
        const depth = depthOf(node.selectionSet, new Set());
        if (depth > max)
          context.reportError(
            limitError(`${node.name ? `Operation ${node.name.value}` : 'The operation'} nests fields ${depth} levels deep; at most ${max} are allowed.`, [node]),
          );
      },
    };
  };
}

/** More than `max` aliased fields in one document. */
export function aliasLimit(max: number): ValidationRule {
  return (context) => {
    let count = 0;
    return {
      Field(node) {
        if (node.alias) count++;
      },
      Document: {
        leave() {
          if (count > max) context.reportError(limitError(`The document uses ${count} aliases; at most ${max} are allowed per request.`));
        },
      },
    };
  };
}

/**
 * What an operation costs against the rate limit: one unit per top-level field, counted by response
 * key, so every alias is a unit of its own (`a1: pod(…) a2: pod(…)` costs 2) while fields the executor
 * merges into one count once. Fields inside top-level fragments are top-level fields too; @skip and
 * @include are not evaluated (a field costs what it is written as). At least 1.
 */
export function operationCost(document: DocumentNode, operationName?: string | null): number {
  const operation = getOperationAST(document, operationName);
  if (!operation) return 1;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const keys = new Set<string>();
  const visit = (set: SelectionSetNode, seen: Set<string>): void => {
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) keys.add(sel.alias?.value ?? sel.name.value);
      else if (sel.kind === Kind.INLINE_FRAGMENT) visit(sel.selectionSet, seen);
      else {
        const fragment = fragments.get(sel.name.value);
        // unknown and cyclic fragments were refused by validation before anything runs
        if (fragment && !seen.has(sel.name.value)) visit(fragment.selectionSet, new Set([...seen, sel.name.value]));
      }
    }
  };
  visit(operation.selectionSet, new Set());
  return Math.max(1, keys.size);
}
