/// <reference types="node" />
import { defineRendererConformance, rendererSampleFragments } from '@ctxgraph/conformance';
import { expectGolden as compareGolden } from '@ctxgraph/conformance/golden';
import {
  type ContextFragment,
  RenderError,
  ValidationError,
  walkFragments,
} from '@ctxgraph/fragments-core';
import { decode } from '@toon-format/toon';
import { describe, expect, it } from 'vitest';

const expectGolden = (file: string, output: string): void =>
  compareGolden(new URL(`./__fixtures__/${file}`, import.meta.url), output);

import { ToonRenderer, toObject } from './toon-renderer';

const render = (fragments: ContextFragment[]): string => new ToonRenderer().render(fragments);

/** What the output must decode to: the object the renderer built. */
const expected = (fragments: ContextFragment[]): unknown =>
  JSON.parse(JSON.stringify(toObject(walkFragments(fragments))));

defineRendererConformance({
  name: 'ToonRenderer',
  createRenderer: () => new ToonRenderer(),
  validateOutput: (output) => {
    decode(output, { strict: true });
  },
});

describe('ToonRenderer', () => {
  it('renders again after the fragments change, even when the same objects are mutated', () => {
    const renderer = new ToonRenderer();
    const fragments = [{ name: 'hint', data: 'first' }];
    const first = renderer.render(fragments);
    expect(renderer.render(fragments)).toBe(first);
    fragments[0]!.data = 'second';
    expect(renderer.render(fragments)).toBe('hint: second');
    expect(renderer.render([{ name: 'hint', data: 'first' }])).toBe(first);
  });

  it("has format 'toon'", () => {
    expect(new ToonRenderer().format).toBe('toon');
  });

  it('matches the golden file for the shared sample, and decodes back to it', () => {
    const output = render(rendererSampleFragments());
    expectGolden('sample.golden.toon', output);
    expect(decode(output)).toStrictEqual(expected(rendererSampleFragments()));
  });

  it('matches the golden file with the tab delimiter', () => {
    const output = new ToonRenderer({ delimiter: 'tab' }).render(rendererSampleFragments());
    expectGolden('sample-tab.golden.toon', output);
    expect(decode(output)).toStrictEqual(expected(rendererSampleFragments()));
  });

  it('renders a list of uniform objects as a table', () => {
    const output = render([
      { name: 'term', data: { name: 'MRR', definition: 'monthly recurring revenue' } },
      { name: 'term', data: { name: 'ARR', definition: 'annual recurring revenue' } },
    ]);
    expect(output).toBe(
      'term[2]{name,definition}:\n  MRR,monthly recurring revenue\n  ARR,annual recurring revenue',
    );
  });

  it('groups 200 fragments of the same name into one valid list', () => {
    const fragments = Array.from({ length: 200 }, (_, index) => ({
      name: 'hint',
      data: `Tip number ${index}`,
    }));
    const output = render(fragments);
    expect(decode(output)).toStrictEqual({ hint: fragments.map((fragment) => fragment.data) });
  });

  it('gives a name that comes back after other fragments the next free key, keeping order', () => {
    const fragments: ContextFragment[] = [
      { name: 'hint', data: 'a' },
      { name: 'term', data: 'b' },
      { name: 'hint', data: 'c' },
      { name: 'hint', data: 'd' },
      { name: 'hint (2)', data: 'e' },
      { name: 'term', data: 'f' },
    ];
    const decoded = decode(render(fragments)) as Record<string, unknown>;
    expect(Object.entries(decoded)).toStrictEqual([
      ['hint', 'a'],
      ['term', 'b'],
      ['hint (3)', ['c', 'd']],
      ['hint (2)', 'e'],
      ['term (2)', 'f'],
    ]);
  });

  it('numbers 20,000 alternating siblings in order, skipping keys taken by other fragments', () => {
    // Numbering used to restart from 2 for every run, which made this shape quadratic (seconds);
    // the keys must stay exactly what they were. No timing here: see the report's script.
    const count = 20_000;
    const fragments: ContextFragment[] = Array.from({ length: count }, (_, index) => ({
      name: index % 2 === 0 ? 'hint' : 'term',
      data: `v${index}`,
    }));
    fragments.push({ name: 'hint (5)', data: 'taken' });
    const keys = Object.keys(decode(render(fragments)) as Record<string, unknown>);
    const expectedKeys: string[] = [];
    let hint = 1;
    for (let index = 0; index < count; index += 1) {
      if (index % 2 === 0) {
        if (hint === 5) hint += 1;
        expectedKeys.push(hint === 1 ? 'hint' : `hint (${hint})`);
        hint += 1;
      } else {
        expectedKeys.push(index === 1 ? 'term' : `term (${(index + 1) / 2})`);
      }
    }
    expectedKeys.push('hint (5)');
    expect(keys).toHaveLength(count + 1);
    expect(keys).toStrictEqual(expectedKeys);
  });

  it('keeps fragment names, lists of fragments and nested data as objects and lists', () => {
    const fragments: ContextFragment[] = [
      {
        name: 'database',
        data: [
          { name: 'hint', data: 'PostgreSQL' },
          {
            name: 'tables',
            data: [{ name: 'users', data: { columns: ['id', 'email'], rows: 3 } }],
          },
        ],
      },
      { name: 'mixed', data: ['text', { name: 'note', data: 'named' }, [1, 2], {}] },
      { name: 'wrapped', data: { name: 'inner', data: true } },
    ];
    expect(decode(render(fragments))).toStrictEqual({
      database: { hint: 'PostgreSQL', tables: { users: { columns: ['id', 'email'], rows: 3 } } },
      mixed: ['text', { note: 'named' }, [1, 2], {}],
      wrapped: { inner: true },
    });
  });

  it('keeps odd keys, __proto__ included, as keys', () => {
    const data: Record<string, string> = {};
    for (const key of [
      'has space',
      'colon:key',
      '[0]',
      '-dash',
      '',
      '42',
      'quote"key',
      '__proto__',
    ]) {
      Object.defineProperty(data, key, {
        value: `v:${key}`,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    const decoded = decode(render([{ name: 'keys', data }])) as { keys: Record<string, string> };
    expect(Object.keys(decoded.keys)).toStrictEqual([
      '42',
      'has space',
      'colon:key',
      '[0]',
      '-dash',
      '',
      'quote"key',
      '__proto__',
    ]);
    expect(Object.getPrototypeOf(decoded.keys)).toBe(Object.prototype);
  });

  it('quotes text that would read as another type or break the line, and decodes it back', () => {
    const texts = [
      'true',
      'null',
      '42',
      '-1.5e3',
      '',
      ' padded ',
      'a,b',
      'key: value',
      '- dash',
      '"quoted"',
      'line\nbreak\r\nx',
      '[1]: x',
      '#',
    ];
    const output = render([{ name: 'texts', data: texts }]);
    expect(decode(output)).toStrictEqual({ texts });
  });

  it('replaces a lone surrogate with U+FFFD in text and names', () => {
    const output = render([
      { name: 'cut\uD83D', data: { 'k\uDE42': 'half \uD83D of an emoji', whole: '🙂' } },
    ]);
    expect(decode(output)).toStrictEqual({
      'cut\uFFFD': { 'k\uFFFD': 'half \uFFFD of an emoji', whole: '🙂' },
    });
  });

  it('uses the delimiter and indentation it is given', () => {
    const fragments: ContextFragment[] = [{ name: 'a', data: { list: ['x,y', 'z'] } }];
    expect(new ToonRenderer({ delimiter: 'pipe', indentSize: 4 }).render(fragments)).toBe(
      'a:\n    list[2|]: x,y|z',
    );
    const tab = new ToonRenderer({ delimiter: 'tab', indentSize: 1 }).render(fragments);
    expect(decode(tab, { indentSize: 1 })).toStrictEqual({ a: { list: ['x,y', 'z'] } });
  });

  it('refuses options it does not know with a ValidationError', () => {
    expect(() => new ToonRenderer({ delimiter: 'semicolon' as 'comma' })).toThrow(ValidationError);
    expect(() => new ToonRenderer({ delimiter: 'semicolon' as 'comma' })).toThrow(
      /options.delimiter must be/,
    );
    for (const indentSize of [0, 9, 1.5]) {
      expect(() => new ToonRenderer({ indentSize })).toThrow(
        /options.indentSize must be an integer from 1 to 8/,
      );
    }
  });

  it('refuses trees deeper than maxDepth with a RenderError naming the limit', () => {
    const renderer = new ToonRenderer({ maxDepth: 2 });
    expect(renderer.render([{ name: 'a', data: { b: 'x' } }])).toBe('a:\n  b: x');
    expect(() => renderer.render([{ name: 'a', data: { b: { c: { d: 'x' } } } }])).toThrow(
      RenderError,
    );
    expect(() => renderer.render([{ name: 'a', data: { b: { c: { d: 'x' } } } }])).toThrow(
      /limit of 2/,
    );
  });
});
