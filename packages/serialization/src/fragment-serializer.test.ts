import { assistantText, user } from '@ctxgraph/codecs';
import {
  type ContextFragment,
  glossary,
  hint,
  lastAssistantMessage,
  policy,
  principle,
  DEFAULT_MAX_DEPTH as RENDER_MAX_DEPTH,
  term,
  walkFragments,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import { examples } from './__fixtures__/examples';
import { serializationError } from './__fixtures__/serialization-error';
import {
  decodeSerializedValue,
  defaultSerializer,
  encodeSerializedValue,
  fromFragment,
  MAX_SERIALIZED_DEPTH,
  type SerializedFragmentType,
  serializedFragmentSchema,
  serializedFragmentSchemas,
  toFragment,
} from './index';

const allTypes = Object.keys(serializedFragmentSchemas) as SerializedFragmentType[];

/** A serialized policy `{ type, rule, policies: [ … ] }` with `wraps` policies around the leaf. */
function nestedFlat(wraps: number): Record<string, unknown> {
  let nested: Record<string, unknown> = { type: 'policy', rule: 'leaf' };
  for (let depth = 0; depth < wraps; depth += 1)
    nested = { type: 'policy', rule: `level ${depth}`, policies: [nested] };
  return nested;
}

/** The same as fragments, built with `policy()`. */
function nestedPolicy(wraps: number): ContextFragment {
  let nested = policy({ rule: 'leaf' });
  for (let depth = 0; depth < wraps; depth += 1)
    nested = policy({ rule: `level ${depth}`, policies: [nested] });
  return nested;
}

describe('fromFragment / toFragment examples', () => {
  it('covers all 19 built-in types', () => {
    expect(allTypes).toHaveLength(19);
    expect(new Set(examples.map((entry) => entry.flat.type))).toEqual(new Set(allTypes));
  });

  it.each(examples)(
    '$title serializes to its flat JSON and hydrates back',
    ({ fragment, flat }) => {
      const serialized = fromFragment(fragment);
      expect(serialized).toEqual(flat);
      // What a database hands back: the JSON text parsed again.
      const stored = JSON.parse(JSON.stringify(serialized)) as unknown;
      expect(stored).toEqual(serialized);
      const hydrated = toFragment(stored);
      expect(walkFragments([hydrated])).toEqual(walkFragments([fragment]));
      expect(JSON.stringify(fromFragment(hydrated))).toBe(JSON.stringify(serialized));
      expect(hydrated).toEqual(fragment);
      expect(serializedFragmentSchema.safeParse(stored).success).toBe(true);
      expect(serializedFragmentSchemas[flat.type].safeParse(stored).success).toBe(true);
    },
  );

  it('puts type first, then the fields in builder order', () => {
    expect(Object.keys(fromFragment(term('MRR', 'monthly recurring revenue')))).toEqual([
      'type',
      'name',
      'definition',
    ]);
  });

  it('leaves out id and metadata, which are not part of the format', () => {
    const withExtras: ContextFragment = {
      ...hint('Be brief'),
      id: 'h-1',
      metadata: { source: 'db' },
    };
    expect(fromFragment(withExtras)).toEqual({ type: 'hint', text: 'Be brief' });
  });

  it('hydrates the spec database round trip', () => {
    const rows = [
      fromFragment(term('MRR', 'monthly recurring revenue')),
      fromFragment(hint('Always exclude test accounts')),
    ].map((entry) => JSON.stringify(entry));
    const hydrated = rows.map((row) => toFragment(JSON.parse(row)));
    expect(hydrated).toEqual([
      term('MRR', 'monthly recurring revenue'),
      hint('Always exclude test accounts'),
    ]);
  });

  it('does not share objects between a fragment and its serialized form', () => {
    const original = glossary({ ARR: 'annual recurring revenue' });
    const serialized = fromFragment(original) as { entries: Record<string, string> };
    serialized.entries.ARR = 'changed';
    expect(original.data.ARR).toBe('annual recurring revenue');
  });
});

describe('fromFragment errors', () => {
  it('refuses an assistant message built by @ctxgraph/codecs', () => {
    const error = serializationError(() => fromFragment(assistantText('Done')));
    expect(error.message).toMatch(/message fragments cannot be converted to serialized fragments/);
    expect(error.message).toContain('"assistant"');
  });

  it('refuses user messages and lazy assistant messages', () => {
    expect(() => fromFragment(user('Hi'))).toThrow(/"user" is a message fragment/);
    expect(() => fromFragment(lastAssistantMessage('Fixed'))).toThrow(/message fragment/);
  });

  it('refuses a message fragment nested inside fragment data, naming where', () => {
    const nested = { name: 'policy', data: { rule: 'x', policies: [assistantText('Done')] } };
    const error = serializationError(() => fromFragment(nested));
    expect(error.issues).toEqual([
      { path: 'policies[0]', message: expect.stringMatching(/"assistant" is a message fragment/) },
    ]);
  });

  it('refuses an unknown fragment name and names it', () => {
    // Object data, so it is not a group (groups hold a list of fragments and text).
    const error = serializationError(() => fromFragment({ name: 'database', data: { host: 'x' } }));
    expect(error.message).toContain('unknown fragment name "database"');
    expect(error.message).toContain('supported: term, hint');
  });

  it('refuses things that are not fragments', () => {
    for (const value of [null, 'hint', 42, [], { name: 'hint' }]) {
      const error = serializationError(() => fromFragment(value as unknown as ContextFragment));
      expect(error.issues[0]?.message).toMatch(/^expected a fragment/);
    }
  });

  it('refuses hand-made fragments whose data does not fit the type, listing every field', () => {
    const error = serializationError(() => fromFragment({ name: 'term', data: { name: 5 } }));
    expect(error.issues).toEqual([
      { path: 'name', message: 'expected string, received number' },
      { path: 'definition', message: 'missing (expected string)' },
    ]);
    expect(error.message).toBe(
      'fromFragment: invalid serialized "term" fragment: name: expected string, received number; definition: missing (expected string).',
    );
  });

  it('refuses object types whose data is not an object, and hint data that is not text', () => {
    expect(serializationError(() => fromFragment({ name: 'term', data: 'MRR' })).issues).toEqual([
      { path: 'data', message: 'expected an object, received string' },
    ]);
    expect(serializationError(() => fromFragment({ name: 'hint', data: ['a'] })).issues).toEqual([
      { path: 'text', message: 'expected string, received array' },
    ]);
  });

  it('refuses extra data fields and a data field named type', () => {
    const extra = serializationError(() =>
      fromFragment({ name: 'alias', data: { term: 'a', meaning: 'b', note: 'c' } }),
    );
    expect(extra.issues).toEqual([
      { path: 'note', message: 'unknown field (not part of this format)' },
    ]);
    const typed = serializationError(() =>
      fromFragment({ name: 'alias', data: { term: 'a', meaning: 'b', type: 'x' } }),
    );
    expect(typed.issues[0]).toEqual({
      path: 'data.type',
      message: 'the field name "type" is reserved by the serialized form',
    });
  });

  it('refuses a nested policy that is not a policy, with its full path', () => {
    const bad = {
      name: 'principle',
      data: {
        title: 't',
        description: 'd',
        policies: [policy({ rule: 'ok' }), hint('not a policy')],
      },
    };
    const error = serializationError(() => fromFragment(bad));
    expect(error.issues.map((issue) => issue.path)).toEqual([
      'policies[1].type',
      'policies[1].rule',
      'policies[1].text',
    ]);
  });

  it('refuses blank strings in hand-made data', () => {
    const error = serializationError(() =>
      fromFragment({ name: 'quirk', data: { issue: ' ', workaround: 'w' } }),
    );
    expect(error.issues).toEqual([{ path: 'issue', message: 'expected a non-empty string' }]);
  });

  it('refuses a fragment that contains itself', () => {
    const data: { rule: string; policies: ContextFragment[] } = { rule: 'loop', policies: [] };
    const looping: ContextFragment = { name: 'policy', data };
    data.policies.push(looping);
    const error = serializationError(() => fromFragment(looping));
    expect(error.issues).toEqual([
      { path: 'policies[0]', message: expect.stringMatching(/cycle/) },
    ]);
  });
});

describe('fromFragment with codecs', () => {
  const kpi = (name: string, meaning: string): ContextFragment => ({
    name: 'kpi',
    data: { name, meaning },
    codec: {
      encode: () => ({ type: 'term', name, definition: meaning }),
      decode: () => ({ name, meaning }),
    },
  });

  it("uses the codec's encoding when it is a supported serialized fragment", () => {
    expect(fromFragment(kpi('NRR', 'net revenue retention'))).toEqual({
      type: 'term',
      name: 'NRR',
      definition: 'net revenue retention',
    });
    expect(toFragment(fromFragment(kpi('NRR', 'net revenue retention')))).toEqual(
      term('NRR', 'net revenue retention'),
    );
  });

  it('encodes fragments inside the codec output', () => {
    const withPolicies: ContextFragment = {
      name: 'rulebook',
      data: null,
      codec: {
        encode: () => ({
          type: 'principle',
          title: 't',
          description: 'd',
          policies: [policy({ rule: 'r' })],
        }),
        decode: () => null,
      },
    };
    expect(fromFragment(withPolicies)).toEqual({
      type: 'principle',
      title: 't',
      description: 'd',
      policies: [{ type: 'policy', rule: 'r' }],
    });
  });

  it('refuses a codec that encodes something unsupported, or breaks the schema', () => {
    const unsupported: ContextFragment = {
      name: 'kpi',
      data: 'x',
      codec: { encode: () => ({ type: 'metric', value: 1 }), decode: () => 'x' },
    };
    expect(serializationError(() => fromFragment(unsupported)).message).toMatch(
      /must encode a serialized fragment of a supported type .* but returned an object with type "metric"/,
    );
    const text: ContextFragment = {
      name: 'kpi',
      data: 'x',
      codec: { encode: () => 'x', decode: () => 'x' },
    };
    expect(serializationError(() => fromFragment(text)).message).toMatch(/but returned string/);
    expect(serializationError(() => fromFragment(kpi('', 'meaning'))).issues).toEqual([
      { path: 'name', message: 'expected a non-empty string' },
    ]);
  });

  it('wraps a codec that throws, keeping the cause', () => {
    const cause = new Error('boom');
    const failing: ContextFragment = {
      name: 'kpi',
      data: 'x',
      codec: {
        encode: () => {
          throw cause;
        },
        decode: () => 'x',
      },
    };
    const error = serializationError(() => fromFragment(failing));
    expect(error.message).toContain('the codec of the "kpi" fragment threw: boom');
    expect(error.cause).toBe(cause);
  });
});

describe('toFragment errors', () => {
  it('refuses values that are not serialized fragment objects', () => {
    for (const [value, received] of [
      [null, 'null'],
      ['hint', 'string'],
      [[{ type: 'hint', text: 'x' }], 'array'],
      [hint('x'), 'a "hint" fragment (it is already hydrated)'],
    ] as const) {
      expect(serializationError(() => toFragment(value)).issues).toEqual([
        { path: '', message: `expected a serialized fragment object, received ${received}` },
      ]);
    }
  });

  it('refuses a missing or non-string type', () => {
    expect(serializationError(() => toFragment({ text: 'x' })).issues).toEqual([
      { path: 'type', message: 'missing (expected the fragment type, a string)' },
    ]);
    expect(serializationError(() => toFragment({ type: 3 })).issues).toEqual([
      { path: 'type', message: 'expected the fragment type as a string, received number' },
    ]);
  });

  it('refuses an unknown type and names it', () => {
    const error = serializationError(() => toFragment({ type: 'metric', name: 'x' }));
    expect(error.message).toMatch(
      /^toFragment: type: unknown serialized fragment type "metric" \(supported: term, hint/,
    );
  });

  it('lists every problem of malformed JSON with its path', () => {
    const error = serializationError(() =>
      toFragment({
        type: 'principle',
        title: 'Execution order',
        description: 42,
        policies: [
          { type: 'policy', rule: 'ok' },
          { type: 'policy', rule: 7 },
          { type: 'policy', rule: 'nested', policies: [{ type: 'policy', rule: '' }] },
          false,
          { type: 'hint', text: 'x' },
        ],
        extra: true,
      }),
    );
    expect(error.issues).toEqual([
      { path: 'description', message: 'expected string, received number' },
      { path: 'policies[1].rule', message: 'expected string, received number' },
      { path: 'policies[2].policies[0].rule', message: 'expected a non-empty string' },
      {
        path: 'policies[3]',
        message: 'expected a serialized policy object or a non-empty string, received boolean',
      },
      { path: 'policies[4].type', message: 'expected "policy", received "hint"' },
      { path: 'policies[4].rule', message: 'missing (expected string)' },
      { path: 'policies[4].text', message: 'unknown field (not part of this format)' },
      { path: 'extra', message: 'unknown field (not part of this format)' },
    ]);
    expect(error.message).toMatch(
      /^toFragment: invalid serialized "principle" fragment: description: expected string/,
    );
    expect(error.message).toContain('policies[1].rule: expected string, received number');
  });

  it('refuses blank strings and too-short lists like the builders do', () => {
    expect(serializationError(() => toFragment({ type: 'hint', text: '   ' })).issues).toEqual([
      { path: 'text', message: 'expected a non-empty string' },
    ]);
    expect(
      serializationError(() => toFragment({ type: 'workflow', task: 't', steps: [] })).issues,
    ).toEqual([{ path: 'steps', message: 'expected at least 1 item(s)' }]);
    expect(
      serializationError(() =>
        toFragment({ type: 'analogy', concepts: ['one', ''], relationship: 'r' }),
      ).issues,
    ).toEqual([{ path: 'concepts[1]', message: 'expected a non-empty string' }]);
    expect(
      serializationError(() =>
        toFragment({ type: 'analogy', concepts: ['one'], relationship: 'r' }),
      ).issues,
    ).toEqual([{ path: 'concepts', message: 'expected at least 2 item(s)' }]);
    expect(serializationError(() => toFragment({ type: 'identity' })).issues).toEqual([
      { path: '', message: 'expected at least one of name or role' },
    ]);
  });

  it('refuses bad glossary entries, naming the term', () => {
    expect(serializationError(() => toFragment({ type: 'glossary', entries: {} })).issues).toEqual([
      { path: 'entries', message: 'expected at least one entry' },
    ]);
    expect(
      serializationError(() =>
        toFragment({ type: 'glossary', entries: { ARR: 'ok', 'net retention': 3, ' ': 'x' } }),
      ).issues,
    ).toEqual([
      { path: 'entries["net retention"]', message: 'expected string, received number' },
      { path: 'entries[" "]', message: 'a term must not be blank' },
    ]);
    // A glossary built by assignment cannot hold this key, so it is refused instead of lost.
    const proto = JSON.parse('{"type":"glossary","entries":{"__proto__":"prototype"}}') as unknown;
    expect(serializationError(() => toFragment(proto)).issues).toEqual([
      { path: 'entries.__proto__', message: 'the term "__proto__" cannot be stored in a glossary' },
    ]);
  });

  it('changes nothing it was given', () => {
    const flat = {
      type: 'principle',
      title: 't',
      description: 'd',
      policies: [{ type: 'policy', rule: 'r' }],
    };
    const before = JSON.parse(JSON.stringify(flat)) as unknown;
    toFragment(flat);
    expect(flat).toEqual(before);
  });
});

describe('serializedFragmentSchema', () => {
  it('rejects an unknown discriminator and malformed nested policies', () => {
    expect(serializedFragmentSchema.safeParse({ type: 'metric' }).success).toBe(false);
    expect(
      serializedFragmentSchema.safeParse({
        type: 'policy',
        rule: 'r',
        policies: [{ type: 'policy' }],
      }).success,
    ).toBe(false);
  });

  it('accepts policy nesting up to the depth limit', () => {
    const nested = nestedFlat(Math.floor((MAX_SERIALIZED_DEPTH - 1) / 2));
    expect(serializedFragmentSchema.safeParse(nested).success).toBe(true);
    const hydrated = toFragment(nested);
    expect(fromFragment(hydrated)).toEqual(nested);
  });

  it('round-trips a principle hydrated from JSON into the same render tree as one built in code', () => {
    const built = principle({
      title: 'Execution order',
      description: 'Preserve prerequisites',
      policies: [
        policy({
          rule: 'Validate schema first',
          policies: [policy({ rule: 'Check table names' })],
        }),
      ],
    });
    expect(walkFragments([toFragment(JSON.parse(JSON.stringify(fromFragment(built))))])).toEqual(
      walkFragments([built]),
    );
  });
});

describe('depth limit', () => {
  // The leaf is one level; each policy around it adds two (its object and its policies list).
  const deepest = Math.floor((MAX_SERIALIZED_DEPTH - 1) / 2);
  const tooDeepPath = `${'policies[0].'.repeat(deepest)}policies[0]`;

  it("is the renderers' default depth, within the stores' JSON depth", () => {
    expect(MAX_SERIALIZED_DEPTH).toBe(RENDER_MAX_DEPTH);
    expect(MAX_SERIALIZED_DEPTH).toBe(64);
  });

  it('round-trips a value exactly at the limit, in all four directions', () => {
    expect(toFragment(fromFragment(nestedPolicy(deepest)))).toEqual(nestedPolicy(deepest));
    // A list around the fragment takes one level, and a plain object one more.
    const value = { list: [nestedPolicy(deepest - 1)] };
    expect(decodeSerializedValue(encodeSerializedValue(value))).toEqual(value);
  });

  it.each([
    ['fromFragment', () => fromFragment(nestedPolicy(deepest + 1)), tooDeepPath],
    ['toFragment', () => toFragment(nestedFlat(deepest + 1)), tooDeepPath],
    [
      'encodeSerializedValue',
      () => encodeSerializedValue({ list: [nestedPolicy(deepest)] }),
      `list[0].${'policies[0].'.repeat(deepest - 1)}policies[0]`,
    ],
    [
      'decodeSerializedValue',
      () => decodeSerializedValue({ list: [nestedFlat(deepest)] }),
      `list[0].${'policies[0].'.repeat(deepest - 1)}policies[0]`,
    ],
  ])(
    '%s refuses one level more with a SerializationError naming the limit and the path',
    (operation, action, path) => {
      const error = serializationError(action);
      expect(error.message).toContain(`${operation}: `);
      expect(error.message).toContain(`nested deeper than ${MAX_SERIALIZED_DEPTH} levels`);
      expect(error.issues).toEqual([{ path, message: expect.stringContaining('nested deeper') }]);
    },
  );

  it.each([700, 5_000])('refuses %i nested policies without overflowing the stack', (wraps) => {
    const flat = nestedFlat(wraps);
    const built = nestedPolicy(wraps);
    for (const action of [
      () => fromFragment(built),
      () => toFragment(flat),
      () => encodeSerializedValue([built]),
      () => decodeSerializedValue([flat]),
    ]) {
      expect(serializationError(action).message).toContain(
        `nested deeper than ${MAX_SERIALIZED_DEPTH} levels`,
      );
    }
    expect(defaultSerializer.isSerializedFragment(flat)).toBe(false);
  });

  it('refuses JSON that contains itself before a schema walks it', () => {
    const flat: Record<string, unknown> = { type: 'policy', rule: 'loop', policies: [] };
    (flat.policies as unknown[]).push(flat);
    expect(serializationError(() => toFragment(flat)).issues).toEqual([
      { path: 'policies[0]', message: expect.stringContaining('contains itself') },
    ]);
    expect(serializationError(() => decodeSerializedValue({ flat })).issues).toEqual([
      { path: 'flat.policies[0]', message: expect.stringContaining('contains itself') },
    ]);
    expect(defaultSerializer.isSerializedFragment(flat)).toBe(false);
  });

  it('counts a fragment with a codec as the one object its codec returns', () => {
    const withCodec = (inner: unknown): ContextFragment => ({
      name: 'note',
      data: 'x',
      codec: { encode: () => inner, decode: () => inner },
    });
    const atLimit = nestedFlat(deepest);
    expect(fromFragment(withCodec(atLimit))).toEqual(atLimit);
    expect(() => fromFragment(withCodec(nestedFlat(deepest + 1)))).toThrow(
      /nested deeper than 64 levels/,
    );
  });
});
