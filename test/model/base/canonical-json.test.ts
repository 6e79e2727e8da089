// The one canonicalJson (the idempotent-create body hash and the constructs' synthesized spec both use
// it). There were two, and they disagreed on `undefined`: one wrote a property holding undefined as
// null, the other left it out. Now it is left out, as JSON.stringify does.
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { canonicalJson } from '../../../model/base/canonical-json.ts';

test('a property holding undefined is left out, as JSON.stringify does, never written null', () => {
  expect(canonicalJson({ b: 1, a: undefined })).toBe('{"b":1}');
  expect(canonicalJson({ b: 1, a: undefined })).toBe(canonicalJson({ b: 1 }));
  expect(canonicalJson({ b: 1, a: undefined })).not.toBe(canonicalJson({ b: 1, a: null }));
  expect(canonicalJson({ x: { y: undefined, z: [undefined, 2] } })).toBe('{"x":{"z":[null,2]}}');
  expect(canonicalJson(undefined)).toBe('null');
});

test('keys are sorted at every level; arrays keep their order', () => {
  expect(canonicalJson({ b: { d: 1, c: 2 }, a: [3, 1, 2] })).toBe('{"a":[3,1,2],"b":{"c":2,"d":1}}');
});

test('an own "__proto__" key (JSON.parse makes one) is kept, not turned into a prototype', () => {
  const body: unknown = JSON.parse('{"name":"p","__proto__":{"polluted":true}}');
  expect(canonicalJson(body)).toBe('{"__proto__":{"polluted":true},"name":"p"}');
  expect(canonicalJson(body)).not.toBe(canonicalJson({ name: 'p' }));
});

test('any JSON value reads back as JSON.stringify would write it, whatever its key order', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (v) => {
      expect(JSON.parse(canonicalJson(v))).toEqual(JSON.parse(JSON.stringify(v)));
    }),
  );
});
