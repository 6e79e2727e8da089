// Renders a prompt into a PNG: the prompt's characters in the 5×7 font (font-5x7.ts), scaled ×4,
// wrapped by character, in an ink colour on a background colour both taken from sha256(prompt), so
// the picture depends on every character and a test can read the text back from the pixels.
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { GLYPH_H, GLYPH_W, glyphPixel } from './font-5x7.ts';

/** pixels per font pixel */
export const SCALE = 4;
/** pixels of border around the text */
export const MARGIN = 8;
/** a character cell is the glyph plus one font pixel right and two below */
export const CELL_W = (GLYPH_W + 1) * SCALE;
export const CELL_H = (GLYPH_H + 2) * SCALE;

export type Rgb = readonly [number, number, number];

export interface Layout {
  width: number;
  height: number;
  background: Rgb;
  ink: Rgb;
  /** the characters drawn, each with the top-left pixel of its glyph (those past the last row are not drawn) */
  chars: { ch: string; x: number; y: number }[];
}

/** Colours and character positions for `prompt` on a width × height picture. */
export function layout(prompt: string, width: number, height: number): Layout {
  const h = createHash('sha256').update(prompt, 'utf8').digest();
  // a dark background and a light ink, so the text always stands out
  const background: Rgb = [h[0]! & 0x5f, h[1]! & 0x5f, h[2]! & 0x5f];
  const ink: Rgb = [h[3]! | 0xa0, h[4]! | 0xa0, h[5]! | 0xa0];
  const cols = Math.max(1, Math.floor((width - 2 * MARGIN) / CELL_W));
  const rows = Math.max(0, Math.floor((height - 2 * MARGIN) / CELL_H));
  const chars = [...prompt.replace(/\s/g, ' ')].slice(0, cols * rows).map((ch, i) => ({
    ch,
    x: MARGIN + (i % cols) * CELL_W,
    y: MARGIN + Math.floor(i / cols) * CELL_H,
  }));
  return { width, height, background, ink, chars };
}

/** The PNG (8-bit RGB) of `prompt`. */
export function renderPrompt(prompt: string, width: number, height: number): Buffer {
  const l = layout(prompt, width, height);
  const rgb = Buffer.alloc(width * height * 3);
  const paint = (x: number, y: number, c: Rgb): void => {
    const o = (y * width + x) * 3;
    rgb[o] = c[0];
    rgb[o + 1] = c[1];
    rgb[o + 2] = c[2];
  };
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) paint(x, y, l.background);
  for (const { ch, x, y } of l.chars) {
    for (let gy = 0; gy < GLYPH_H; gy++) {
      for (let gx = 0; gx < GLYPH_W; gx++) {
        if (!glyphPixel(ch, gx, gy)) continue;
        for (let dy = 0; dy < SCALE; dy++) for (let dx = 0; dx < SCALE; dx++) paint(x + gx * SCALE + dx, y + gy * SCALE + dy, l.ink);
      }
    }
  }
  return encodePng(rgb, width, height);
}

// A minimal PNG encoder (node:zlib only, so the worker bundles without CommonJS packages): one IDAT
// of scanlines with filter type 0, 8-bit truecolour.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

function encodePng(rgb: Buffer, width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // bit depth 8, colour type 2 (RGB), deflate, filter 0, no interlace
  const rows = Buffer.alloc(height * (1 + width * 3));
  for (let y = 0; y < height; y++) rgb.copy(rows, y * (1 + width * 3) + 1, y * width * 3, (y + 1) * width * 3);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
