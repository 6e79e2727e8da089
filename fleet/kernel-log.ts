// The kernel's log lines as the GPU watcher reads them (docs/gpu-health.md): journald's JSON
// (`journalctl -k -o json`) or `dmesg --raw` lines, each with where it is in the log (boot and
// kernel monotonic time, the journal's cursor), and what an NVIDIA driver line says: an Xid, the
// `NVRM: GPU at PCI:…: GPU-<uuid>` line that maps a bus id to a GPU, or a GPU fallen off the bus.

export interface KernelLine {
  text: string;
  /** the boot the line is from (journald's _BOOT_ID); null for dmesg (the session's boot) */
  bootId: string | null;
  /** kernel monotonic time of the line, µs; null when the line has none */
  monotonicUs: number | null;
  /** journald's cursor; null for dmesg */
  cursor: string | null;
}

/** Boot ids as journald writes them (32 hex) and /proc/sys/kernel/random/boot_id does (with dashes) compare as one. */
export const normalBootId = (id: string): string => id.replace(/-/g, '').toLowerCase();

/** One `journalctl -o json` line, or null when it is not one. MESSAGE may be an array of bytes. */
export function parseJournalLine(line: string): KernelLine | null {
  if (!line.startsWith('{')) return null;
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
  const m = o['MESSAGE'];
  const text = typeof m === 'string' ? m : Array.isArray(m) ? Buffer.from(m.filter((b): b is number => typeof b === 'number')).toString('utf8') : null;
  if (text === null) return null;
  const mono = Number(o['_SOURCE_MONOTONIC_TIMESTAMP'] ?? o['__MONOTONIC_TIMESTAMP']);
  return {
    text,
    bootId: typeof o['_BOOT_ID'] === 'string' ? normalBootId(o['_BOOT_ID']) : null,
    monotonicUs: Number.isFinite(mono) ? mono : null,
    cursor: typeof o['__CURSOR'] === 'string' ? o['__CURSOR'] : null,
  };
}

const DMESG_RAW = /^(?:<(\d+)>)?\[\s*(\d+)\.(\d{1,9})\]\s?(.*)$/;

/** One `dmesg --raw` line (`<4>[  123.456789] text`); a line without a timestamp has monotonicUs null. */
export function parseDmesgLine(line: string): KernelLine {
  const m = DMESG_RAW.exec(line);
  if (!m) return { text: line.replace(/^<\d+>/, ''), bootId: null, monotonicUs: null, cursor: null };
  const frac = m[3]!.padEnd(6, '0').slice(0, 6);
  return { text: m[4]!, bootId: null, monotonicUs: Number(m[2]) * 1_000_000 + Number(frac), cursor: null };
}

export type DriverLine =
  | { kind: 'xid'; pci: string; xid: number; detail: string }
  | { kind: 'gpu-at'; pci: string; uuid: string }
  | { kind: 'fallen-off'; pci: string | null; detail: string };

const XID = /NVRM: Xid \(PCI:([^)]+)\): (\d+)(?:, pid=[^,]*)?(?:, name=[^,]*)?,?\s*(.*)$/;
const GPU_AT = /NVRM: GPU at PCI:([0-9a-fA-F:.]+): (GPU-[0-9a-fA-F-]+)/;
const PCI_IN_TEXT = /(?:PCI:)?\b([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\b/;

/** What an NVIDIA driver line says, or null for any other line (most of them). */
export function parseDriverLine(text: string): DriverLine | null {
  const x = XID.exec(text);
  if (x) return { kind: 'xid', pci: x[1]!.trim(), xid: Number(x[2]), detail: x[3]!.trim() };
  const g = GPU_AT.exec(text);
  if (g) return { kind: 'gpu-at', pci: g[1]!, uuid: g[2]! };
  // NVSentinel's rule: "fallen off the bus" with no Xid on the line is its own failure
  if (/fallen off the bus/i.test(text) && !/\bXid\b/.test(text)) return { kind: 'fallen-off', pci: PCI_IN_TEXT.exec(text)?.[1] ?? null, detail: text.trim() };
  return null;
}

/** Whether a line is at or before a position (same boot, monotonic time not later): handled already. */
export function atOrBefore(line: { bootId: string | null; monotonicUs: number | null }, pos: { bootId: string | null; monotonicUs: number | null }): boolean {
  if (line.monotonicUs === null || pos.monotonicUs === null || line.bootId === null || line.bootId !== pos.bootId) return false;
  return line.monotonicUs <= pos.monotonicUs;
}
