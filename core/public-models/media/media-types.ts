// The media a public model may return (docs/public-endpoints.md, "The worker output contract"): the
// MIME types served, the file extension each is stored under (the extension, never a worker's
// string, names the type when the bytes are served), recognising a type from the first bytes, and the
// two measurements the platform makes itself: the duration of WAV audio, the pixels of a PNG or JPEG.

export type MediaKind = 'image' | 'audio' | 'video';

/** MIME type → [kind, extension]. Only types a browser renders passively: no HTML, no SVG. */
const TYPES: Readonly<Record<string, readonly [MediaKind, string]>> = {
  'image/png': ['image', 'png'],
  'image/jpeg': ['image', 'jpg'],
  'image/webp': ['image', 'webp'],
  'image/gif': ['image', 'gif'],
  'audio/wav': ['audio', 'wav'],
  'audio/mpeg': ['audio', 'mp3'],
  'audio/ogg': ['audio', 'ogg'],
  'audio/flac': ['audio', 'flac'],
  'audio/webm': ['audio', 'weba'],
  'video/mp4': ['video', 'mp4'],
  'video/webm': ['video', 'webm'],
};
const ALIASES: Readonly<Record<string, string>> = { 'audio/x-wav': 'audio/wav', 'audio/wave': 'audio/wav', 'audio/vnd.wave': 'audio/wav', 'audio/mp3': 'audio/mpeg', 'image/jpg': 'image/jpeg' };

export const MEDIA_EXTENSIONS: readonly string[] = Object.values(TYPES).map(([, ext]) => ext);

/** `image/png` (parameters and case ignored, aliases folded) → its canonical form, or undefined when not served */
export function canonicalMime(raw: string): string | undefined {
  const base = raw.split(';')[0]!.trim().toLowerCase();
  const mime = ALIASES[base] ?? base;
  return TYPES[mime] ? mime : undefined;
}

export function kindOf(mime: string): MediaKind | undefined {
  return TYPES[mime]?.[0];
}

export function extensionOf(mime: string): string | undefined {
  return TYPES[mime]?.[1];
}

export function mimeOfExtension(ext: string): string | undefined {
  for (const [mime, [, e]] of Object.entries(TYPES)) if (e === ext) return mime;
  return undefined;
}

const ascii = (b: Buffer, at: number, s: string) => b.length >= at + s.length && b.toString('latin1', at, at + s.length) === s;

/** the type from the first bytes, for outputs that name none */
export function sniffMime(b: Buffer): string | undefined {
  if (ascii(b, 0, '\x89PNG\r\n\x1a\n')) return 'image/png';
  if (b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP')) return 'image/webp';
  if (ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a')) return 'image/gif';
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WAVE')) return 'audio/wav';
  if (ascii(b, 0, 'ID3') || (b.length > 2 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0)) return 'audio/mpeg';
  if (ascii(b, 0, 'OggS')) return 'audio/ogg';
  if (ascii(b, 0, 'fLaC')) return 'audio/flac';
  if (ascii(b, 4, 'ftyp')) return 'video/mp4';
  if (b.length > 4 && b.readUInt32BE(0) === 0x1a45dfa3) return 'video/webm';
  return undefined;
}

/**
 * Seconds of audio in a RIFF/WAVE file: the `data` chunk's bytes ÷ the `fmt ` chunk's byte rate.
 * Undefined when it is not a WAV file this can read. A data size of 0 or 0xFFFFFFFF (a streaming
 * writer that never went back to fill it in) counts the bytes actually present.
 */
export function wavSeconds(b: Buffer): number | undefined {
  if (!ascii(b, 0, 'RIFF') || !ascii(b, 8, 'WAVE')) return undefined;
  let byteRate: number | undefined;
  for (let at = 12; at + 8 <= b.length; ) {
    const id = b.toString('latin1', at, at + 4);
    let size = b.readUInt32LE(at + 4);
    if (id === 'fmt ' && at + 16 <= b.length) byteRate = b.readUInt32LE(at + 16);
    if (id === 'data') {
      const present = b.length - (at + 8);
      if (size === 0 || size === 0xffffffff || size > present) size = present;
      return byteRate ? size / byteRate : undefined;
    }
    at += 8 + size + (size % 2); // chunks are padded to an even length
  }
  return undefined;
}

/** width × height of a PNG (IHDR) or JPEG (the first SOFn), or undefined */
export function imagePixels(b: Buffer): number | undefined {
  if (ascii(b, 0, '\x89PNG\r\n\x1a\n') && ascii(b, 12, 'IHDR') && b.length >= 24) return b.readUInt32BE(16) * b.readUInt32BE(20);
  if (b.length > 3 && b[0] === 0xff && b[1] === 0xd8) {
    for (let at = 2; at + 9 < b.length; ) {
      if (b[at] !== 0xff) return undefined;
      const marker = b[at + 1]!;
      if (marker === 0xff) {
        at++; // fill byte
        continue;
      }
      // SOF0..SOF15 but DHT (C4), JPG (C8) and DAC (CC)
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return b.readUInt16BE(at + 5) * b.readUInt16BE(at + 7);
      at += 2 + b.readUInt16BE(at + 2);
    }
  }
  return undefined;
}
