// One line of this machine's /etc/hosts for a test (a name the code under test must resolve), added and
// later removed: only that line, under an flock(1) on one lock file that every test editing /etc/hosts
// takes, so two test files running at once never lose each other's lines (a read-then-write without a
// lock can write back a file read before the other's change). /etc/hosts is rewritten in place, not
// renamed over (in a container it is a bind mount, and a rename onto it fails).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);
const FILE = '/etc/hosts';
const LOCK = '/tmp/gpufleet-test-etc-hosts.lock';

/** `$1` with the file ending in a newline first */
const APPEND = `f=${FILE}; if [ -s "$f" ] && [ -n "$(tail -c 1 "$f")" ]; then echo >> "$f"; fi; printf '%s\\n' "$1" >> "$f"`;
/** the first line equal to `$1` removed, every other line kept */
const REMOVE = `f=${FILE}; t=$(mktemp) && L="$1" awk '!d && $0 == ENVIRON["L"] { d = 1; next } 1' "$f" > "$t" && cat "$t" > "$f"; r=$?; rm -f "$t"; exit $r`;

const locked = (script: string, line: string) => execFileP('flock', ['-w', '30', LOCK, 'sh', '-c', script, 'sh', line]);

/**
 * Appends `line` (e.g. `10.0.0.7 h2.example`) to /etc/hosts; the function returned removes that line
 * again (once; later calls do nothing).
 */
export async function addHostsLine(line: string): Promise<() => Promise<void>> {
  if (/[\n\r]/.test(line)) throw new Error(`one line for /etc/hosts, got ${JSON.stringify(line)}`);
  await locked(APPEND, line);
  let removed = false;
  return async () => {
    if (removed) return;
    removed = true;
    await locked(REMOVE, line);
  };
}
