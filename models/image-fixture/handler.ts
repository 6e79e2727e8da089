// TEST FIXTURE, not a model: the handler of a queue worker (main.ts) that stands in for a GPU image
// model (FLUX, SDXL) in tests and demos. It answers an image model's request shape with a PNG of the
// prompt's text (render.ts), in milliseconds on a CPU, so the media, catalog and billing paths of
// public endpoints can be exercised with real pixels.
//
// Input:  {"prompt": "...", "width"?: 64..1024 (512), "height"?: 64..1024 (512)}
// Output: {"image_base64": <PNG>, "mime_type": "image/png", "width", "height", "fixture": true,
//          "usage": {"units": n}}: n = 1 (images), or width × height ÷ 10⁶ (megapixels) when the
//          worker's env has IMAGE_USAGE_UNIT=megapixel; match the catalog entry's pricing unit.
import { renderPrompt } from './render.ts';

export const MAX_PROMPT = 1000;
export const SIZE = { min: 64, max: 1024, default: 512 } as const;

/** a refused input; its message is the job's error */
class InputError extends Error {
  override name = 'InputError';
}

export interface ImageInput {
  prompt: string;
  width: number;
  height: number;
}

export function parseInput(raw: unknown): ImageInput {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new InputError('input must be an object: {"prompt": "..."}');
  const inp = raw as Record<string, unknown>;
  const unknown = Object.keys(inp).filter((k) => !['prompt', 'width', 'height'].includes(k));
  if (unknown.length) throw new InputError(`input.${unknown[0]}: unknown field (allowed: prompt, width, height)`);
  const { prompt } = inp;
  if (typeof prompt !== 'string' || !prompt.trim()) throw new InputError('input.prompt: required, a non-empty string');
  if (prompt.length > MAX_PROMPT) throw new InputError(`input.prompt: at most ${MAX_PROMPT} characters (got ${prompt.length})`);
  const size = (k: 'width' | 'height'): number => {
    const v = inp[k] ?? SIZE.default;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < SIZE.min || v > SIZE.max) throw new InputError(`input.${k}: an integer from ${SIZE.min} to ${SIZE.max}`);
    return v;
  };
  return { prompt, width: size('width'), height: size('height') };
}

export function generate(raw: unknown, unit = process.env.IMAGE_USAGE_UNIT ?? 'image'): Record<string, unknown> {
  let input: ImageInput;
  try {
    input = parseInput(raw);
  } catch (e) {
    // the platform fails the job with this string (the `error` key, as in runpod-python)
    if (e instanceof InputError) return { error: e.message };
    throw e;
  }
  const png = renderPrompt(input.prompt, input.width, input.height);
  return {
    image_base64: png.toString('base64'),
    mime_type: 'image/png',
    width: input.width,
    height: input.height,
    fixture: true,
    usage: { units: unit === 'megapixel' ? (input.width * input.height) / 1e6 : 1 },
  };
}
