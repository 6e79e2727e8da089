// What the platform measures itself and how a cost is rounded (docs/public-endpoints.md).
import { expect, test } from 'vitest';
import { canonicalMime, costMicros, imagePixels, kindOf, sniffMime, wavSeconds } from '../../../core/index.ts';
import { makePng, makeWav } from './media-fixtures.ts';

test('WAV duration: data bytes ÷ byte rate; odd-sized chunks before data are skipped; not a WAV is undefined', () => {
  expect(wavSeconds(makeWav(2.5))).toBeCloseTo(2.5, 9);
  expect(wavSeconds(makeWav(1, 16_000))).toBe(1);
  // a LIST chunk of odd length before `data` (padded to even), as some writers add
  const wav = makeWav(0.5);
  const list = Buffer.concat([Buffer.from('LIST', 'latin1'), Buffer.from([3, 0, 0, 0]), Buffer.from('abc\0', 'latin1')]);
  const withList = Buffer.concat([wav.subarray(0, 36), list, wav.subarray(36)]);
  expect(wavSeconds(withList)).toBeCloseTo(0.5, 9);
  // a streaming writer's 0xFFFFFFFF data size: the bytes present count
  const streamed = Buffer.from(makeWav(0.2));
  streamed.writeUInt32LE(0xffffffff, 40);
  expect(wavSeconds(streamed)).toBeCloseTo(0.2, 9);
  expect(wavSeconds(makePng(2, 2))).toBeUndefined();
});

test('image pixels from the PNG header; types recognised from the bytes', () => {
  expect(imagePixels(makePng(640, 480))).toBe(307_200);
  expect(sniffMime(makePng(1, 1))).toBe('image/png');
  expect(sniffMime(makeWav(0.1))).toBe('audio/wav');
  expect(sniffMime(Buffer.from('<svg onload=alert(1)>'))).toBeUndefined();
  expect(canonicalMime('audio/x-wav')).toBe('audio/wav');
  expect(canonicalMime('Image/PNG; charset=binary')).toBe('image/png');
  expect(canonicalMime('text/html')).toBeUndefined();
  expect(canonicalMime('image/svg+xml')).toBeUndefined();
  expect(kindOf('video/mp4')).toBe('video');
});

test('costs are whole micro-dollars, rounded half up without float noise', () => {
  expect(costMicros(2.5, 0.0005)).toBe(1250);
  expect(costMicros(3, 0.003)).toBe(9000);
  expect(costMicros(1, 0.0000005)).toBe(1); // half a micro-dollar rounds up
  expect(costMicros(1, 0.00000049)).toBe(0);
  expect(costMicros(0.1 + 0.2, 10)).toBe(3_000_000);
  expect(costMicros(1000, 0.000001)).toBe(1000);
});
