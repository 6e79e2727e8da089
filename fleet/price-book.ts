// The operator's prices: USD per GPU-hour per cloud tier, and per type the spot floor (the lowest bid
// an interruptible pod may make, docs/teams.md "Interruptible pods"). Built-in defaults
// (gpu-catalog.ts) apply unless `<dataDir>/prices.json` overrides them (docs/gpu-catalog.md).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GpufleetError } from '../model/index.ts';
import { jsonPath } from '../model/index.ts';
import type { CloudTier } from '../model/index.ts';
import { GPU_CATALOG } from './gpu-catalog.ts';

export interface PriceBook {
  /** USD per GPU per hour; throws NOT_FOUND for a type the catalog does not know */
  priceFor(typeId: string, cloud: CloudTier): number;
  /** the lowest bid (USD per GPU-hour) an interruptible pod of this type may make in this tier; always > 0 */
  spotFloor(typeId: string, cloud: CloudTier): number;
  /** where the overrides came from, for logs: the file path or null when only defaults apply */
  readonly source: string | null;
}

export const PRICES_FILE = 'prices.json';

/** The spot floor when prices.json sets none: half the tier's on-demand price, never 0. */
export const DEFAULT_SPOT_SHARE = 0.5;
export const MIN_SPOT_FLOOR = 0.0001;

const roundPrice = (n: number) => Math.round(n * 10000) / 10000;

export function defaultSpotFloor(onDemand: number): number {
  return Math.max(MIN_SPOT_FLOOR, roundPrice(onDemand * DEFAULT_SPOT_SHARE));
}

type Row = { price: Record<CloudTier, number>; spotFloor: Partial<Record<CloudTier, number>> };

const pointerOf = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** `spotFloor`: one number for both tiers, or `{SECURE, COMMUNITY}`; each > 0. */
function readSpotFloor(value: unknown, at: string, row: Row, errors: string[]): void {
  const positive = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v > 0;
  if (typeof value === 'number') {
    if (!positive(value)) errors.push(`${jsonPath(at)}: must be a number > 0 (USD per GPU-hour)`);
    else row.spotFloor = { SECURE: value, COMMUNITY: value };
    return;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    errors.push(`${jsonPath(at)}: must be a number > 0 or an object with SECURE and/or COMMUNITY floors`);
    return;
  }
  for (const [tier, floor] of Object.entries(value as Record<string, unknown>)) {
    const path = jsonPath(`${at}/${pointerOf(tier)}`);
    if (tier !== 'SECURE' && tier !== 'COMMUNITY') errors.push(`${path}: unknown cloud tier`);
    else if (!positive(floor)) errors.push(`${path}: must be a number > 0 (USD per GPU-hour)`);
    else row.spotFloor[tier] = floor as number;
  }
}

/** Validate a parsed prices.json and merge it over the defaults. Pure, so tests need no files. */
export function buildPriceBook(overrides: unknown, source: string | null = null): PriceBook {
  const table = new Map<string, Row>();
  for (const t of GPU_CATALOG) table.set(t.id, { price: { ...t.defaultPrice }, spotFloor: {} });
  const errors: string[] = [];
  if (overrides !== undefined) {
    if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) {
      errors.push('$: must be an object keyed by GPU type id');
    } else {
      for (const [typeId, tiers] of Object.entries(overrides)) {
        const pointer = '/' + pointerOf(typeId);
        const path = jsonPath(pointer);
        const row = table.get(typeId);
        if (!row) {
          // An unknown id is almost always a typo; silently ignoring it would bill the default.
          errors.push(`${path}: unknown GPU type id`);
          continue;
        }
        if (typeof tiers !== 'object' || tiers === null || Array.isArray(tiers)) {
          errors.push(`${path}: must be an object with SECURE and/or COMMUNITY prices (and optionally spotFloor)`);
          continue;
        }
        for (const [tier, price] of Object.entries(tiers as Record<string, unknown>)) {
          const at = `${pointer}/${pointerOf(tier)}`;
          if (tier === 'spotFloor') readSpotFloor(price, at, row, errors);
          else if (tier !== 'SECURE' && tier !== 'COMMUNITY') errors.push(`${jsonPath(at)}: unknown cloud tier`);
          else if (typeof price !== 'number' || !Number.isFinite(price) || price < 0)
            errors.push(`${jsonPath(at)}: must be a non-negative number (USD per GPU-hour)`);
          else row.price[tier] = price;
        }
      }
    }
  }
  if (errors.length > 0) {
    throw new GpufleetError('VALIDATION_FAILED', `invalid GPU price file${source ? ` ${source}` : ''}`, {
      errors,
      fields: { source },
    });
  }
  const rowOf = (typeId: string): Row => {
    const row = table.get(typeId);
    if (!row) throw new GpufleetError('NOT_FOUND', `unknown GPU type id ${typeId}`, { fields: { gpuTypeId: typeId } });
    return row;
  };
  return {
    source,
    priceFor: (typeId, cloud) => rowOf(typeId).price[cloud],
    spotFloor(typeId, cloud) {
      const row = rowOf(typeId);
      return row.spotFloor[cloud] ?? defaultSpotFloor(row.price[cloud]);
    },
  };
}

/** Defaults only; what `priceFor` uses when no book is given. */
export const DEFAULT_PRICE_BOOK: PriceBook = buildPriceBook(undefined);

/**
 * Read `<dataDir>/prices.json` if present (sync: called once at startup, before serving). A missing file
 * means defaults; an unreadable or invalid one fails startup rather than billing wrong prices.
 */
export function loadPriceBook(dataDir: string): PriceBook {
  const file = join(dataDir, PRICES_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return DEFAULT_PRICE_BOOK;
    throw new GpufleetError('INTERNAL', `cannot read ${file}`, { cause: err, fields: { source: file } });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new GpufleetError('INVALID_JSON', `${file} is not valid JSON`, { cause: err, fields: { source: file } });
  }
  return buildPriceBook(parsed, file);
}

/** USD per GPU per hour for a type in a tier. */
export function priceFor(typeId: string, cloud: CloudTier, book: PriceBook = DEFAULT_PRICE_BOOK): number {
  return book.priceFor(typeId, cloud);
}
