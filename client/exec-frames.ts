// The frames of an interactive exec session (GET /v2/pods/{id}/exec/ws, docs/pods.md "Interactive
// exec"), both ways, with no socket in sight: binary frames are one channel byte then data (0 stdin,
// 1 stdout, 2 stderr); text frames are JSON control messages (client: resize, eof; server, last:
// exit or error). Browser-safe (Uint8Array, TextEncoder: no Buffer).

export const EXEC_CHANNEL = { stdin: 0, stdout: 1, stderr: 2 } as const;

/** how a session ended: the exit code (null when it ended otherwise) and why */
export interface ExecSessionEnd {
  code: number | null;
  /** exited | client closed | idle timeout | connection lost */
  reason: string;
}

/** the problem+json of a session that could not open on the host */
export interface ExecProblem {
  status?: number;
  code?: string;
  detail?: string;
  errors?: string[];
}

export type ExecFrame =
  | { kind: 'stdout' | 'stderr'; data: Uint8Array }
  | { kind: 'exit'; exit: ExecSessionEnd }
  | { kind: 'error'; problem: ExecProblem }
  /** a channel or control message this client does not know: ignored, as the server ignores them */
  | { kind: 'other' };

const encoder = new TextEncoder();

/** a stdin frame: channel 0, then the bytes (a string is sent as UTF-8) */
export function stdinFrame(data: Uint8Array | string): Uint8Array {
  const bytes = typeof data === 'string' ? encoder.encode(data) : data;
  const frame = new Uint8Array(bytes.length + 1);
  frame[0] = EXEC_CHANNEL.stdin;
  frame.set(bytes, 1);
  return frame;
}

/** a resize control message (cols and rows are whole numbers 1–1000; others are clamped) */
export function resizeMessage(cols: number, rows: number): string {
  const fit = (n: number) => Math.min(1000, Math.max(1, Math.round(n) || 1));
  return JSON.stringify({ resize: { cols: fit(cols), rows: fit(rows) } });
}

export const EOF_MESSAGE = JSON.stringify({ eof: true });

/** a frame from the server: a string (text frame) or the bytes of a binary one */
export function decodeFrame(data: string | ArrayBuffer | Uint8Array): ExecFrame {
  if (typeof data !== 'string') {
    const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
    if (bytes[0] === EXEC_CHANNEL.stdout) return { kind: 'stdout', data: bytes.subarray(1) };
    if (bytes[0] === EXEC_CHANNEL.stderr) return { kind: 'stderr', data: bytes.subarray(1) };
    return { kind: 'other' };
  }
  let m: { exit?: ExecSessionEnd; error?: ExecProblem } | null;
  try {
    m = JSON.parse(data) as typeof m;
  } catch {
    return { kind: 'other' };
  }
  if (m?.exit && typeof m.exit === 'object') return { kind: 'exit', exit: { code: typeof m.exit.code === 'number' ? m.exit.code : null, reason: String(m.exit.reason ?? '') } };
  if (m?.error && typeof m.error === 'object') return { kind: 'error', problem: m.error };
  return { kind: 'other' };
}
