// A refusal (4xx GpufleetError) carries no stack frames, a fault (5xx) keeps them (model/base/errors.ts:
// capturing a stack was measurable on every refused request, bench/api.ts); the process's
// Error.stackTraceLimit is left as it was either way.
import { expect, test } from 'vitest';
import { GpufleetError } from '../../../model/index.ts';

test('4xx: no frames; 5xx: frames; Error.stackTraceLimit unchanged', () => {
  const limit = Error.stackTraceLimit;
  const refusal = new GpufleetError('VALIDATION_FAILED', 'The pod failed validation: $.name: is required', { errors: ['$.name: is required'] });
  expect(refusal.stack).toBe('GpufleetError: The pod failed validation: $.name: is required');
  expect(new GpufleetError('RATE_LIMITED', 'slow down').stack!.split('\n')).toHaveLength(1);
  const fault = new GpufleetError('INTERNAL', 'boom');
  expect(fault.stack!.split('\n').length).toBeGreaterThan(1);
  expect(fault.stack).toContain('error-stacks.test.ts');
  expect(Error.stackTraceLimit).toBe(limit);
});
