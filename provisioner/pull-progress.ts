// What a `docker pull` on a terminal shows, read back as numbers: per layer its state and bytes
// (`<layer>: Downloading [==>   ]  12.3MB/40MB`, `Pull complete`, `Already exists`), summed into the
// progress the pod's reason shows. Docker draws its progress bars only on a terminal (without one it
// drops every progress line), so the pull runs with a PTY and the output comes with cursor moves.
// Only numbers we compute reach the reason, never docker's text (it may carry a registry's words).

/** Strips terminal control sequences (cursor moves, line clears). */
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;
const LAYER_LINE = /^([0-9a-f]{12}): (.+)$/;
const BYTES = /^(Downloading|Extracting)\s+(?:\[[^\]]*\]\s+)?([\d.]+)\s?([kMGT]?B)\/([\d.]+)\s?([kMGT]?B)/;
const UNIT: Record<string, number> = { B: 1, kB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 };

interface Layer {
  done: boolean;
  downloaded: number;
  /** compressed size, once docker reports it */
  size: number | null;
}

export interface PullSummary {
  layers: number;
  layersDone: number;
  /** bytes downloaded, of `bytesKnown` (the layers whose size docker has shown) */
  bytes: number;
  bytesKnown: number;
}

export class PullProgress {
  private readonly layers = new Map<string, Layer>();
  private partial = '';
  /** per layer, the extraction line last shown (extraction moves without a download byte) */
  private readonly lastExtract = new Map<string, string>();
  /** the last lines of output but the layers' (docker's messages, errors among them), for the classifier and the operator's log */
  private tail: string[] = [];

  /** Reads a chunk of output; answers whether the progress moved (any layer changed). */
  feed(chunk: string): boolean {
    const text = this.partial + chunk.replace(ANSI, '');
    const lines = text.split(/[\r\n]/);
    this.partial = lines.pop() ?? '';
    let moved = false;
    for (const raw of lines) {
      const line = raw.trim();
      if (!line) continue;
      if (LAYER_LINE.test(line)) moved = this.line(line) || moved;
      else {
        this.tail.push(line);
        if (this.tail.length > 20) this.tail.shift();
      }
    }
    return moved;
  }

  private line(line: string): boolean {
    const m = LAYER_LINE.exec(line);
    if (!m) return false;
    const id = m[1]!;
    const status = m[2]!.trim();
    const before = this.layers.get(id);
    const layer: Layer = before ? { ...before } : { done: false, downloaded: 0, size: null };
    const b = BYTES.exec(status);
    if (b && b[1] === 'Downloading') {
      layer.downloaded = Number(b[2]) * (UNIT[b[3]!] ?? 1);
      layer.size = Number(b[4]) * (UNIT[b[5]!] ?? 1);
    } else if (status.startsWith('Download complete') || status.startsWith('Verifying Checksum') || (b && b[1] === 'Extracting')) {
      if (layer.size !== null) layer.downloaded = layer.size;
    } else if (status.startsWith('Pull complete') || status.startsWith('Already exists')) {
      layer.done = true;
      if (layer.size !== null) layer.downloaded = layer.size;
    }
    // extraction moves too: a layer of many files can extract for minutes without a download byte
    const extracting = b && b[1] === 'Extracting' ? status : '';
    const key = (l: Layer | undefined, x = '') => (l ? `${l.done}/${l.downloaded}/${l.size}/${x}` : '');
    const moved = key(before, this.lastExtract.get(id)) !== key(layer, extracting);
    this.lastExtract.set(id, extracting);
    this.layers.set(id, layer);
    return moved;
  }

  summary(): PullSummary {
    let layersDone = 0;
    let bytes = 0;
    let bytesKnown = 0;
    for (const l of this.layers.values()) {
      if (l.done) layersDone++;
      if (l.size !== null) {
        bytes += l.downloaded;
        bytesKnown += l.size;
      }
    }
    return { layers: this.layers.size, layersDone, bytes, bytesKnown };
  }

  /** the output's last lines but the layers' progress (docker's own words: the operator's log only) */
  lastLines(): string {
    const partial = this.partial.trim();
    return [...this.tail, LAYER_LINE.test(partial) ? '' : partial].filter(Boolean).join('\n').slice(-1000);
  }
}

/** 12.3 MB, 512 kB, 40 B: decimal units, as docker prints them. */
export function formatBytes(n: number): string {
  for (const [unit, size] of [['GB', 1e9], ['MB', 1e6], ['kB', 1e3]] as const) {
    if (n >= size) return `${(n / size).toFixed(1).replace(/\.0$/, '')} ${unit}`;
  }
  return `${Math.round(n)} B`;
}

/** The pod's reason while its image is pulled: `pulling image x:1 (12.3 MB of 40 MB, 1 of 3 layers done)`. */
export function pullingReason(image: string, s: PullSummary | null): string {
  if (!s || s.layers === 0) return `pulling image ${image} (waiting for the registry)`;
  const parts = [];
  if (s.bytesKnown > 0) parts.push(`${formatBytes(s.bytes)} of ${formatBytes(s.bytesKnown)}`);
  parts.push(`${s.layersDone} of ${s.layers} layers done`);
  return `pulling image ${image} (${parts.join(', ')})`;
}
