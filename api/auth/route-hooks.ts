// Hooks that concern a few routes go on those routes (route options, set from an onRoute hook)
// instead of on the instance, where every request would run them to find it has nothing to do.

/** a route option's hooks (none, one or a list) as a list, so a hook can be put first among them */
export function routeHooks<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}
