// The one command the GPU watcher runs on a host, on one SSH channel (docs/gpu-health.md): it follows
// the kernel log and polls nvidia-smi's health fields, so the watch takes a single session of the host.
//   stdout: `@@start <boot id> <uptime s>`, then kernel lines as they come: journald's JSON
//           (`journalctl -k -f -o json`, after the stored cursor) where journald runs, else `dmesg
//           --follow --raw` (the whole ring buffer first; the watcher skips what it handled already).
//   stderr: `F <query-gpu fields>`, `G <remapped-rows fields or ->`, then per poll `P <n> <exit>`, the
//           `Q <csv row>`s, `R <exit>` and `r <csv row>`s of --query-remapped-rows where needed, `Z <n>`;
//           `X <exit> <error>` when the log reader ends.
// Each nvidia-smi call is bounded by `timeout` (exit 124 on a hang). The watch stops when its stdin
// closes (sshd does not signal a command): the reader and the poll loop are killed with it.
import { shellJoin } from './shell-join.ts';
import { HEALTH_FIELDS, ID_FIELDS, REMAPPED_FIELDS, USAGE_FIELDS } from './smi-health.ts';

export interface WatchScriptOptions {
  /** journald cursor to continue after; null: from the start of the boot */
  cursor: string | null;
  /** seconds between polls (whole, at least 1) */
  pollSeconds: number;
  /** seconds one nvidia-smi call may take (whole, at least 1) */
  smiTimeoutSeconds: number;
}

/** journald cursors are `s=…;i=…;b=…;m=…;t=…;x=…`: nothing else is passed on */
export const JOURNAL_CURSOR = /^[A-Za-z0-9=;_.:-]{1,512}$/;

/**
 * Shell lines that set `T` (a `timeout` prefix, where the host has one), `F` (the --query-gpu health
 * and usage fields the driver offers, from --help-query-gpu) and `G` (the --query-remapped-rows fields, or `-` when
 * --query-gpu has the remapped rows), and print `F …` and `G …`.
 */
export function fieldDiscovery(smiTimeoutSeconds: number): string[] {
  const limit = Math.max(1, Math.floor(smiTimeoutSeconds));
  const wanted = [...HEALTH_FIELDS, ...USAGE_FIELDS].map((f) => (f.startsWith('clocks_event_reasons.') ? `${f}:${f.replace('clocks_event_reasons.', 'clocks_throttle_reasons.')}` : `${f}:${f}`)).join(' ');
  return [
    `T=; command -v timeout >/dev/null 2>&1 && T='timeout -k 2 ${limit}'`,
    `help=$($T nvidia-smi --help-query-gpu 2>/dev/null); F=${ID_FIELDS.join(',')}`,
    `for p in ${wanted}; do a=\${p%%:*}; b=\${p#*:}; case "$help" in *"\\"$a\\""*) F="$F,$a" ;; *"\\"$b\\""*) F="$F,$b" ;; esac; done`,
    `G=-; case ",$F," in *,remapped_rows.pending,*) ;; *) G=${REMAPPED_FIELDS.join(',')} ;; esac`,
    'echo "F $F"; echo "G $G"',
  ];
}

/** Shell lines that print one poll's frame: `P <n> <exit>`, `Q <row>`s, `R <exit>`, `r <row>`s, `Z <n>` (after fieldDiscovery; `n` set). */
export const POLL_FRAME = [
  'o=$($T nvidia-smi --query-gpu="$F" --format=csv,noheader,nounits 2>&1); c=$?',
  'echo "P $n $c"; printf "%s\\n" "$o" | sed "s/^/Q /"',
  'if [ "$G" != - ]; then o=$($T nvidia-smi --query-remapped-rows="$G" --format=csv,noheader,nounits 2>&1); echo "R $?"; printf "%s\\n" "$o" | sed "s/^/r /"; fi',
  'echo "Z $n"',
];

export function watchScript(o: WatchScriptOptions): string {
  const poll = Math.max(1, Math.floor(o.pollSeconds));
  const after = o.cursor !== null && JOURNAL_CURSOR.test(o.cursor) ? ` ${shellJoin([`--after-cursor=${o.cursor}`])}` : '';
  return [
    'exec 3<&0; { IFS= read -r _ <&3; kill -TERM 0; } & trap \'exit 143\' HUP INT TERM',
    'd=$(mktemp -d 2>/dev/null || echo /tmp); trap \'rm -f "$d/kerr"; [ "$d" = /tmp ] || rmdir "$d" 2>/dev/null\' EXIT',
    'echo "@@start $(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo -) $(cut -d" " -f1 /proc/uptime 2>/dev/null || echo -)"',
    // journald where it runs and holds this boot's kernel lines (a journalctl without journald, as in
    // many containers, has none): else dmesg
    'if command -v journalctl >/dev/null 2>&1 && journalctl -k -q -n 1 --no-pager 2>/dev/null | grep -q .; then',
    `  { journalctl -k -f -q -o json -n all --no-pager${after} 2>"$d/kerr"; printf 'X %s %s\\n' "$?" "$(head -c 300 "$d/kerr" | tr '\\n' ' ')" >&2; } &`,
    'else',
    `  { dmesg --follow --raw 2>"$d/kerr"; printf 'X %s %s\\n' "$?" "$(head -c 300 "$d/kerr" | tr '\\n' ' ')" >&2; } &`,
    'fi',
    '{',
    ...fieldDiscovery(o.smiTimeoutSeconds),
    '} >&2; n=0',
    'while :; do',
    '  n=$((n+1)); {',
    ...POLL_FRAME.map((l) => `  ${l}`),
    '  } >&2',
    `  sleep ${poll}`,
    'done',
  ].join('\n');
}
