// One held place counted under a key (an account): taken now, given back once by the function it
// answers, whichever way its holder ends (a second call does nothing).

/** Gives a held place back; calling it again does nothing. */
export type Release = () => void;

/** Counts one more under `key`; the release counts it off, deleting the key at 0, then calls `emptied` when no key is left. */
export function holdOne(counts: Map<string, number>, key: string, emptied?: () => void): Release {
  counts.set(key, (counts.get(key) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const n = (counts.get(key) ?? 1) - 1;
    if (n > 0) counts.set(key, n);
    else counts.delete(key);
    if (counts.size === 0) emptied?.();
  };
}
