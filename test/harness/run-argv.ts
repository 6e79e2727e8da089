// The property every `docker run` argument list keeps (provisioner/container-spec.ts), for the unit
// tests and the fuzz tests: `run`, then only `--name=value` words (and the bare `--detach`), then the
// end of options, the image, and the start command split from args. Whatever a user value holds, it
// is inside an option word or after the image position, so docker never reads it as an option.
import { END_OF_OPTIONS, splitArgs, type RunSpec } from '../../provisioner/index.ts';
import type { PodRecord } from '../../model/index.ts';

const OPTION_WORD = /^--[a-z][a-z-]*=/;

/** What breaks the property, one line each; empty when it holds. */
export function userOptionProblems(s: RunSpec, pod: Pick<PodRecord, 'image' | 'args'>): string[] {
  const out: string[] = [];
  const end = s.argv.indexOf(END_OF_OPTIONS);
  if (s.argv[0] !== 'run') out.push(`argv starts with ${JSON.stringify(s.argv[0])}`);
  if (end < 1) return [...out, 'no end of options'];
  for (const w of s.argv.slice(1, end)) if (w !== '--detach' && !OPTION_WORD.test(w)) out.push(`option position holds ${JSON.stringify(w)}`);
  if (s.argv[end + 1] !== pod.image) out.push(`image position holds ${JSON.stringify(s.argv[end + 1])}, not the image`);
  const rest = s.argv.slice(end + 2);
  const want = splitArgs(pod.args);
  if (JSON.stringify(rest) !== JSON.stringify(want)) out.push(`after the image: ${JSON.stringify(rest)}, not the split args`);
  for (const w of s.envArgs) if (!w.startsWith('--env=')) out.push(`env word ${JSON.stringify(w)}`);
  return out;
}
