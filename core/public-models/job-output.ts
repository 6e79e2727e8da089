// What becomes of a public model's result before the job is final (docs/public-endpoints.md, "The
// worker output contract"): base64 media fields go to the media store and come back as signed URLs,
// the units are counted (the worker's `usage.units`, else measured here) and `cost` is written.
// Called by the worker protocol's job-done for every final report; results of endpoints that back
// no slug, and failures, pass through untouched.
import { GpufleetError, type PricingUnit, type PublicEndpointRecord } from '../../model/index.ts';
import type { CompleteRequest } from '../jobs/index.ts';
import type { MediaService } from './media/media-service.ts';
import { canonicalMime, imagePixels, kindOf, sniffMime, wavSeconds, type MediaKind } from './media/media-types.ts';
import { costMicros, maxUnitsPerJob } from '../billing/index.ts';
import type { PublicEndpointCatalog } from './catalog.ts';

const KINDS: readonly MediaKind[] = ['image', 'audio', 'video'];
/** units one job may report (the cost must also stay a safe integer of micro-dollars) */
export const MAX_UNITS = 1e9;
const BASE64 = /^[A-Za-z0-9+/\-_]*={0,2}$/;
const DATA_URI = /^data:([^;,]*)(?:;[^;,]*)*;base64,/i;

type Output = Record<string, unknown>;

export { costMicros };

interface Decoded {
  kind: MediaKind;
  bytes: Buffer;
  mime: string;
}

const isObject = (v: unknown): v is Output => typeof v === 'object' && v !== null && !Array.isArray(v);

/** an output the contract refuses: the job becomes FAILED with this reason */
class Refused extends Error {}

function decodeMedia(out: Output, kind: MediaKind): Decoded | undefined {
  const field = `${kind}_base64`;
  if (!(field in out)) return undefined;
  const raw = out[field];
  if (typeof raw !== 'string') throw new Refused(`$.${field}: must be a base64 string`);
  const uri = DATA_URI.exec(raw);
  const text = (uri ? raw.slice(uri[0].length) : raw).replace(/\s+/g, '');
  if (text.length === 0 || !BASE64.test(text)) throw new Refused(`$.${field}: is not base64`);
  const bytes = Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64');
  if (bytes.length === 0) throw new Refused(`$.${field}: is empty`);
  const named = [out[`${kind}_mime_type`], uri?.[1] || undefined, out.mime_type].find((v) => v !== undefined);
  if (named !== undefined && typeof named !== 'string') throw new Refused(`$.${kind}_mime_type: must be a string`);
  const mime = named !== undefined ? canonicalMime(named) : sniffMime(bytes);
  if (!mime) throw new Refused(named !== undefined ? `$.${field}: media type ${named} is not served` : `$.${field}: the media type is not named (mime_type) and not recognised from the bytes`);
  if (kindOf(mime) !== kind) throw new Refused(`$.${field}: media type ${mime} is not ${kind === 'video' ? 'a' : 'an'} ${kind} type`);
  return { kind, bytes, mime };
}

/** the units the platform can count itself when the worker reports none */
function measuredUnits(unit: PricingUnit, media: Decoded[]): number {
  switch (unit) {
    case 'request':
      return 1;
    case 'image':
      return media.filter((m) => m.kind === 'image').length;
    case 'megapixel':
      return media.reduce((n, m) => n + (m.kind === 'image' ? (imagePixels(m.bytes) ?? 0) / 1e6 : 0), 0);
    case 'second':
      return media.reduce((n, m) => n + (m.mime === 'audio/wav' ? (wavSeconds(m.bytes) ?? 0) : 0), 0);
    case 'token':
      return 0;
  }
}

export class PublicEndpointOutputs {
  constructor(
    private readonly catalog: PublicEndpointCatalog,
    private readonly media: MediaService,
  ) {}

  /** the final report as the queue should record it */
  async finish(endpointId: string, result: CompleteRequest): Promise<CompleteRequest> {
    if (result.error !== undefined) return result;
    const entry = await this.catalog.forEndpoint(endpointId);
    if (!entry) return result;
    try {
      return { output: await this.convert(entry, result.output) };
    } catch (e) {
      if (e instanceof Refused) return { error: `the output of public model ${entry.id} was refused: ${e.message}` };
      throw e;
    }
  }

  private async convert(entry: PublicEndpointRecord, output: unknown): Promise<Output> {
    const out: Output = isObject(output) ? { ...output } : output === undefined ? {} : { result: output };
    // every field is checked before anything is stored, so a refusal leaves no bytes behind
    const media = KINDS.map((k) => decodeMedia(out, k)).filter((m): m is Decoded => m !== undefined);
    const usage = out.usage === undefined ? {} : out.usage;
    if (!isObject(usage)) throw new Refused('$.usage: must be an object');
    let units: number;
    if (usage.units !== undefined) {
      if (typeof usage.units !== 'number' || !(usage.units >= 0 && usage.units <= MAX_UNITS)) throw new Refused(`$.usage.units: must be a number from 0 to ${MAX_UNITS}`);
      units = usage.units;
    } else units = measuredUnits(entry.pricing.unit, media);
    // a job is charged at most its hold: maxUnitsPerJob × usdPerUnit (docs/public-endpoints.md, "Charges")
    const cap = maxUnitsPerJob(entry);
    const micros = costMicros(cap === undefined ? units : Math.min(units, cap), entry.pricing.usdPerUnit);
    if (!Number.isSafeInteger(micros)) throw new Refused(`$.usage.units: ${units} units at ${entry.pricing.usdPerUnit} USD is more than a job may cost`);
    for (const m of media) {
      const saved = await this.media.save(m.bytes, m.mime).catch((e: unknown) => {
        throw new GpufleetError('UNAVAILABLE', `The media store could not keep the ${m.kind} of this result; report it again.`, { cause: e });
      });
      delete out[`${m.kind}_base64`];
      out[`${m.kind}_url`] = saved.url;
    }
    out.usage = { ...usage, units, unit: entry.pricing.unit };
    out.cost = micros / 1e6;
    return out;
  }
}
