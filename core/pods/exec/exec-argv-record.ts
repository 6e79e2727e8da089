// What an exec event keeps of its command (docs/pods.md, "Exec"): the program name and a SHA-256 of
// the arguments, never the arguments themselves. A secret typed into a command (`mysql -pSECRET`,
// `curl -H "Authorization: …"`) would otherwise stay in the pod's event history, its archive and
// its `system` log lines for as long as they are kept. The digest lets the account check which
// command ran: it is the SHA-256 of the arguments after the program as a JSON array
// (`printf '%s' '["-c","echo hi"]' | sha256sum`).
import { createHash } from 'node:crypto';

/** a program name longer than this is cut (argv words may be up to 8192 characters) */
const PROGRAM_MAX = 128;

/** `"<program>"`, then `args sha256:<hex>` when there are arguments */
export function execArgvRecord(argv: readonly string[]): string {
  const [program = '', ...args] = argv;
  const name = JSON.stringify(program.length > PROGRAM_MAX ? `${program.slice(0, PROGRAM_MAX)}…` : program);
  if (args.length === 0) return name;
  return `${name} (${args.length} argument${args.length === 1 ? '' : 's'}, sha256:${argsDigest(args)})`;
}

/** hex SHA-256 of `JSON.stringify(args)` */
export function argsDigest(args: readonly string[]): string {
  return createHash('sha256').update(JSON.stringify(args)).digest('hex');
}
