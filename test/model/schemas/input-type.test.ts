// The request types are the schemas' (json-schema-to-ts), read as Ajv validates: with useDefaults off,
// a property the schema gives a `default` is still absent when the client leaves it out, so its type
// stays optional. Checked by tsc (which checks the tests) and, for the runtime half, by vitest.
import { expect, expectTypeOf, test } from 'vitest';
import { validatePodCreate } from '../../../model/rules/pod-validation.ts';
import type { HostDrainInput } from '../../../model/schemas/host.ts';
import type { PodActionInput, PodCreateInput } from '../../../model/schemas/pod.ts';

test('a defaulted property is optional in the type and absent after validation', () => {
  expectTypeOf<NonNullable<PodCreateInput['gpu']>>().toEqualTypeOf<{ id: string; count?: number; allowedCudaVersions?: string[] }>();
  expectTypeOf<HostDrainInput>().toEqualTypeOf<{ drained?: boolean; deadline?: string | number }>();
  const input = validatePodCreate({ name: 'p', image: 'img', gpu: { id: 'NVIDIA H100 80GB HBM3' } });
  expect(input.gpu).toEqual({ id: 'NVIDIA H100 80GB HBM3' });
});

test('enums, nullable and required fields follow the schema', () => {
  expectTypeOf<PodActionInput>().toEqualTypeOf<{ action: 'start' | 'stop' | 'restart' | 'terminate' }>();
  expectTypeOf<PodCreateInput['name']>().toEqualTypeOf<string>();
  expectTypeOf<PodCreateInput['registry']>().toEqualTypeOf<string | null | undefined>();
  expectTypeOf<PodCreateInput['cloud']>().toEqualTypeOf<'SECURE' | 'COMMUNITY' | undefined>();
});
