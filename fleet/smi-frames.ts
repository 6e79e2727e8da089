// The poll frames the watch script and the driver check print (gpu-watch-script.ts): `F <fields>` and
// `G <remapped-rows fields or ->` once, then per poll `P <n> <exit>`, `Q <csv row>`s, `R <exit>`,
// `r <csv row>`s and `Z <n>`. Fed line by line; each `Z` completes a frame, the remapped rows merged
// into the GPU rows by bus id.
import { busKey } from './gpu-bus-id.ts';
import { parseHealthCsv, type GpuSample } from './smi-health.ts';

export interface PollFrame {
  /** nvidia-smi --query-gpu's exit (124: timed out) */
  rc: number;
  samples: GpuSample[];
  /** the raw answer rows, --query-gpu's then --query-remapped-rows' */
  raw: string[];
}

export class PollFrames {
  fields: string | null = null;
  remappedFields: string | null = null;
  private cur: { rc: number; q: string[]; rrc: number | null; r: string[] } | null = null;

  /** A line of the frames; answers the frame a `Z` line completes, else null. */
  feed(line: string): PollFrame | null {
    const tag = line.slice(0, 2);
    const rest = line.slice(2);
    if (tag === 'F ') this.fields = rest.trim();
    else if (tag === 'G ') this.remappedFields = rest.trim();
    else if (tag === 'P ') this.cur = { rc: Number(rest.split(' ')[1] ?? 1), q: [], rrc: null, r: [] };
    else if (tag === 'Q ') this.cur?.q.push(rest);
    else if (tag === 'R ' && this.cur) this.cur.rrc = Number(rest.trim());
    else if (tag === 'r ') this.cur?.r.push(rest);
    else if (tag === 'Z ' && this.cur) {
      const f = this.cur;
      this.cur = null;
      const samples = parseHealthCsv(f.q.join('\n'), (this.fields ?? '').split(','));
      const remapped = this.remappedFields && this.remappedFields !== '-' ? this.remappedFields.split(',') : null;
      if (remapped && f.rrc === 0) {
        const byBus = new Map(parseHealthCsv(f.r.join('\n'), remapped).map((s) => [busKey(s.busId), s]));
        for (const s of samples) Object.assign(s.values, byBus.get(busKey(s.busId))?.values ?? {});
      }
      return { rc: f.rc, samples, raw: [...f.q, ...f.r] };
    }
    return null;
  }
}
