// Request limits checked while the document is validated, before anything runs: nesting depth and
// alias count (aliases are how one request would otherwise multiply work: `a1: pod(…) a2: pod(…) …`).
// The parser's token cap (MAX_TOKENS) bounds the document itself.
import { GraphQLError, Kind, type SelectionSetNode, type ValidationRule } from 'graphql';

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
