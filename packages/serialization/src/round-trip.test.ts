import {
  type ContextFragment,
  type FragmentData,
  joinPath,
  policy,
  ValidationError,
  walkFragments,
} from '@ctxgraph/fragments-core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  anyFragment,
  blank,
  fragmentData,
  fragmentsByType,
  text,
} from './__fixtures__/arbitraries';
import {
  decodeSerializedValue,
  encodeSerializedValue,
  fromFragment,
  MAX_SERIALIZED_DEPTH,
  SerializationError,
  serializedFragmentSchema,
  toFragment,
} from './index';

// Deeply nested policies go past the renderers' default depth limit; the comparison is about
// equality, not about whether a renderer would accept them.
const walk = (fragment: ContextFragment) => walkFragments([fragment], { maxDepth: 10_000 });

function expectRoundTrip(original: ContextFragment): void {
  const serialized = fromFragment(original);
  const stored = JSON.stringify(serialized);
  const parsed = JSON.parse(stored) as unknown;
  expect(parsed).toEqual(serialized);
  expect(serializedFragmentSchema.safeParse(parsed).success).toBe(true);
  const hydrated = toFragment(parsed);
  expect(walk(hydrated)).toEqual(walk(original));
  expect(JSON.stringify(fromFragment(hydrated))).toBe(stored);
  expect(hydrated).toEqual(original);
}

describe('round trip (property-based)', () => {
  for (const [type, arbitrary] of Object.entries(fragmentsByType)) {
    it(`${type}: fromFragment → JSON → toFragment renders and serializes identically`, () => {
      fc.assert(fc.property(arbitrary, expectRoundTrip), { numRuns: 60 });
    });
  }

  it('any mix of built-in fragments', () => {
    fc.assert(fc.property(anyFragment, expectRoundTrip), { numRuns: 200 });
  });

  it('policies nested deep, with plain-text policies beside them', () => {
    fc.assert(
      fc.property(
        // Up to the limit: the leaf is one level and each policy around it adds two.
        fc.integer({ min: 1, max: Math.floor((MAX_SERIALIZED_DEPTH - 1) / 2) }),
        text,
        fc.array(text, { maxLength: 2 }),
        (depth, rule, siblings) => {
          let current = policy({ rule });
          for (let level = 0; level < depth; level += 1) {
            current = policy({ rule: `${rule} ${level}`, policies: [...siblings, current] });
          }
          expectRoundTrip(current);
        },
      ),
      { numRuns: 30 },
    );
  });
});

/** The paths of the text fields of a flat fragment, list items included (nested policies aside). */
function textSlots(
  flat: Record<string, unknown>,
): Array<{ path: string; set: (value: string) => void }> {
  const slots: Array<{ path: string; set: (value: string) => void }> = [];
  for (const [key, value] of Object.entries(flat)) {
    if (key === 'type') continue;
    if (typeof value === 'string') slots.push({ path: key, set: (next) => (flat[key] = next) });
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        if (typeof item === 'string')
          slots.push({ path: joinPath(key, index), set: (next) => (value[index] = next) });
      });
    }
    if (key === 'entries' && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const entries = value as Record<string, string>;
      for (const term of Object.keys(entries)) {
        slots.push({ path: joinPath(key, term), set: (next) => (entries[term] = next) });
      }
    }
  }
  return slots;
}

describe('blank strings are refused, not round-tripped (property-based)', () => {
  it('toFragment names the blank field, whatever the type', () => {
    fc.assert(
      fc.property(anyFragment, blank, fc.nat(), (original, blankValue, pick) => {
        const flat = JSON.parse(JSON.stringify(fromFragment(original))) as Record<string, unknown>;
        const slots = textSlots(flat);
        const slot = slots[pick % slots.length];
        if (slot === undefined) throw new Error('every built-in type has a text field');
        slot.set(blankValue);
        let thrown: unknown;
        try {
          toFragment(flat);
        } catch (error) {
          thrown = error;
        }
        expect(SerializationError.isInstance(thrown)).toBe(true);
        expect((thrown as SerializationError).issues).toContainEqual({
          path: slot.path,
          message: 'expected a non-empty string',
        });
      }),
      { numRuns: 200 },
    );
  });

  it('the builders refuse the same blanks', () => {
    fc.assert(
      fc.property(blank, (blankValue) => {
        expect(() => policy({ rule: blankValue })).toThrow(ValidationError);
        expect(() => fromFragment({ name: 'hint', data: blankValue })).toThrow(SerializationError);
      }),
    );
  });
});

describe('encodeSerializedValue / decodeSerializedValue (property-based)', () => {
  it('encodes to JSON that decodes into data that renders the same', () => {
    const wrap = (data: FragmentData): ContextFragment => ({ name: 'root', data });
    fc.assert(
      fc.property(fragmentData, (value) => {
        const encoded = encodeSerializedValue(value);
        const json =
          encoded === undefined ? undefined : (JSON.parse(JSON.stringify(encoded)) as unknown);
        expect(json).toEqual(encoded);
        const decoded = decodeSerializedValue(json);
        expect(walkFragments([wrap(decoded)])).toEqual(walkFragments([wrap(value)]));
        expect(encodeSerializedValue(decoded)).toEqual(encoded);
        // Encoding is idempotent: already-encoded JSON encodes to itself.
        expect(encodeSerializedValue(encoded)).toEqual(encoded);
      }),
      { numRuns: 200 },
    );
  });
});
