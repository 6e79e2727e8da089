import { expect, test } from 'vitest';
import { parseDuration } from '../../../model/rules/duration.ts';

test('Go durations and seconds are read; anything else is null', () => {
  expect(parseDuration('10m')).toBe(600_000);
  expect(parseDuration('1h30m')).toBe(5_400_000);
  expect(parseDuration('1.5h')).toBe(5_400_000);
  expect(parseDuration('90s')).toBe(90_000);
  expect(parseDuration('250ms')).toBe(250);
  expect(parseDuration('2m30s500ms')).toBe(150_500);
  expect(parseDuration('600')).toBe(600_000);
  expect(parseDuration(600)).toBe(600_000);
  expect(parseDuration(0.5)).toBe(500);
  for (const bad of ['', '10 m', '-5m', '+5m', '1d', '5m;reboot', '--deadline', 'm', '1e3', 'NaN', 'Infinity', '5M', ' 5m', 'x'.repeat(70)])
    expect(parseDuration(bad), bad).toBeNull();
  for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, true, null, undefined, {}, []]) expect(parseDuration(bad), String(bad)).toBeNull();
});
