// A RIFF/WAVE reader for tests: walks the chunks, reads `fmt ` and `data`, and throws on anything
// that is not a well-formed PCM WAV (so a test that decodes audio can fail on a broken file).

export interface Wav {
  format: number;
  channels: number;
  sampleRate: number;
  byteRate: number;
  blockAlign: number;
  bitsPerSample: number;
  /** bytes of the data chunk */
  dataBytes: number;
  /** data bytes ÷ byte rate */
  seconds: number;
  /** the first channel's samples, for 16-bit PCM */
  samples: Int16Array;
}

export function parseWav(buf: Buffer): Wav {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a RIFF/WAVE file');
  if (buf.readUInt32LE(4) !== buf.length - 8) throw new Error(`RIFF size ${buf.readUInt32LE(4)} is not the file's ${buf.length - 8}`);
  let fmt: Omit<Wav, 'dataBytes' | 'seconds' | 'samples'> | undefined;
  for (let pos = 12; pos + 8 <= buf.length; ) {
    const id = buf.toString('ascii', pos, pos + 4);
    const size = buf.readUInt32LE(pos + 4);
    if (pos + 8 + size > buf.length) throw new Error(`chunk ${id} runs past the end of the file`);
    if (id === 'fmt ') {
      fmt = {
        format: buf.readUInt16LE(pos + 8),
        channels: buf.readUInt16LE(pos + 10),
        sampleRate: buf.readUInt32LE(pos + 12),
        byteRate: buf.readUInt32LE(pos + 16),
        blockAlign: buf.readUInt16LE(pos + 20),
        bitsPerSample: buf.readUInt16LE(pos + 22),
      };
    } else if (id === 'data') {
      if (!fmt) throw new Error('data chunk before fmt chunk');
      if (fmt.byteRate !== fmt.sampleRate * fmt.blockAlign) throw new Error('byte rate is not sample rate × block align');
      const data = buf.subarray(pos + 8, pos + 8 + size);
      const samples = new Int16Array(fmt.bitsPerSample === 16 ? Math.floor(size / fmt.blockAlign) : 0);
      for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(i * fmt.blockAlign);
      return { ...fmt, dataBytes: size, seconds: size / fmt.byteRate, samples };
    }
    pos += 8 + size + (size & 1);
  }
  throw new Error('no data chunk');
}

/** Root mean square of the samples, 0..32768: speech is loud, silence is 0. */
export function rms(samples: Int16Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return samples.length ? Math.sqrt(sum / samples.length) : 0;
}
