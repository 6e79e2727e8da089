// POSIX-shell quoting of an argv, for commands sent to hosts over SSH (sshd runs them with
// `<login shell> -c`): every argument reaches the program as exactly one word, never as syntax.
import { GpufleetError } from '../model/index.ts';

/** POSIX-shell quoting of an argv; safe words stay bare for readable logs. */
export function shellJoin(argv: string[]): string {
  return argv
    .map((a, i) => {
      if (a.includes('\0')) throw new GpufleetError('BAD_REQUEST', 'command argument contains a NUL byte');
      // '=' in the first word would make it a variable assignment
      const safe = i === 0 ? /^[A-Za-z0-9_/.,:@%+-]+$/ : /^[A-Za-z0-9_/.,:@%+=-]+$/;
      return safe.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
    })
    .join(' ');
}
