import { describe, expect, it } from 'vitest';
import { RenderError } from '../errors/errors';
import { hint, policy, principle, term } from '../fragment/builders';
import type { ContextFragment } from '../fragment/context-fragment';
import { fragment } from '../fragment/fragment';
import { type RenderNode, walkFragments } from './render-tree';
import { TreeRenderer } from './tree-renderer';

describe('walkFragments', () => {
  it('normalizes fragments, nested fragments, lists, objects and scalars', () => {
    const nodes = walkFragments([
      hint('Be concise.'),
      term('MRR', 'monthly recurring revenue'),
      fragment(
        'database',
        hint('PostgreSQL 15'),
        fragment('limits', { rows: 1000, strict: true, tags: ['a', 'b'] }),
      ),
    ]);
    expect(nodes).toEqual([
      { kind: 'scalar', key: 'hint', value: 'Be concise.' },
      {
        kind: 'fragment',
        key: 'term',
        children: [
          { kind: 'scalar', key: 'name', value: 'MRR' },
          { kind: 'scalar', key: 'definition', value: 'monthly recurring revenue' },
        ],
      },
      {
        kind: 'fragment',
        key: 'database',
        children: [
          { kind: 'scalar', key: 'hint', value: 'PostgreSQL 15' },
          {
            kind: 'fragment',
            key: 'limits',
            children: [
              { kind: 'scalar', key: 'rows', value: 1000 },
              { kind: 'scalar', key: 'strict', value: true },
              {
                kind: 'list',
                key: 'tags',
                children: [
                  { kind: 'scalar', key: null, value: 'a' },
                  { kind: 'scalar', key: null, value: 'b' },
                ],
              },
            ],
          },
        ],
      },
    ]);
  });

  it('skips null and undefined everywhere, and fragments whose data is null', () => {
    const nodes = walkFragments([
      { name: 'gone', data: null },
      { name: 'also-gone', data: undefined },
      {
        name: 'kept',
        data: { a: null, b: undefined, c: [null, 'x', undefined], d: 0, e: false, f: '' },
      },
    ]);
    expect(nodes).toEqual([
      {
        kind: 'fragment',
        key: 'kept',
        children: [
          { kind: 'list', key: 'c', children: [{ kind: 'scalar', key: null, value: 'x' }] },
          { kind: 'scalar', key: 'd', value: 0 },
          { kind: 'scalar', key: 'e', value: false },
          { kind: 'scalar', key: 'f', value: '' },
        ],
      },
    ]);
  });

  it('keeps a fragment held directly as data, and principle → policy → policy nesting', () => {
    expect(walkFragments([{ name: 'wrapper', data: hint('inner') }])).toEqual([
      {
        kind: 'fragment',
        key: 'wrapper',
        children: [{ kind: 'scalar', key: 'hint', value: 'inner' }],
      },
    ]);
    const nodes = walkFragments([
      principle({
        title: 't',
        description: 'd',
        policies: [policy({ rule: 'r', policies: [policy({ rule: 'deep' })] })],
      }),
    ]);
    expect(JSON.stringify(nodes)).toContain('"value":"deep"');
  });

  it('shows bigint, Date and non-finite numbers as text', () => {
    const nodes = walkFragments([
      {
        name: 'values',
        data: { big: 10n, when: new Date(0), inf: Number.POSITIVE_INFINITY } as never,
      },
    ]);
    expect(nodes[0]).toEqual({
      kind: 'fragment',
      key: 'values',
      children: [
        { kind: 'scalar', key: 'big', value: '10' },
        { kind: 'scalar', key: 'when', value: '1970-01-01T00:00:00.000Z' },
        { kind: 'scalar', key: 'inf', value: 'Infinity' },
      ],
    });
  });

  it('refuses values that are not fragment data, naming where they are', () => {
    expect(() => walkFragments([{ name: 'x', data: { callback: () => 1 } as never }])).toThrow(
      /x\.callback: function/,
    );
    expect(() => walkFragments([{ name: 'x', data: [new Map()] as never }])).toThrow(
      /x\[0\]: an instance of Map/,
    );
    expect(() => walkFragments(['not a fragment' as never])).toThrow(
      /fragments\[0\] is not a fragment/,
    );
  });

  it('refuses a class instance held directly as fragment data', () => {
    expect(() => walkFragments([{ name: 'm', data: new Map([['a', 1]]) as never }])).toThrow(
      'Cannot render the value at m: an instance of Map',
    );
  });

  it('keeps the object key of a fragment held under it', () => {
    expect(
      walkFragments([{ name: 'settings', data: { primary: hint('use the replica') } }]),
    ).toEqual([
      {
        kind: 'fragment',
        key: 'settings',
        children: [
          {
            kind: 'object',
            key: 'primary',
            children: [{ kind: 'scalar', key: 'hint', value: 'use the replica' }],
          },
        ],
      },
    ]);
  });

  it('refuses a maxDepth that is not a positive integer', () => {
    for (const maxDepth of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => walkFragments([hint('x')], { maxDepth })).toThrow(
        'maxDepth must be a positive integer',
      );
    }
  });

  it('refuses cycles instead of looping', () => {
    const data: Record<string, unknown> = { a: 1 };
    data.self = data;
    expect(() => walkFragments([{ name: 'loop', data: data as never }])).toThrow(RenderError);
    expect(() => walkFragments([{ name: 'loop', data: data as never }])).toThrow(/cycle/);
  });

  it('allows the same object twice when it is not its own ancestor', () => {
    const shared = { a: 1 };
    expect(walkFragments([{ name: 'twice', data: [shared, shared] }])[0]).toMatchObject({
      kind: 'fragment',
    });
  });

  it('refuses trees deeper than maxDepth with an error naming the limit, without overflowing the stack', () => {
    let deep: ContextFragment = { name: 'leaf', data: 'x' };
    for (let level = 0; level < 100_000; level += 1) deep = { name: 'n', data: deep };
    expect(() => walkFragments([deep])).toThrow(RenderError);
    expect(() => walkFragments([deep])).toThrow(
      'nests deeper than the limit of 64 levels (maxDepth)',
    );
    let shallow: ContextFragment = { name: 'leaf', data: 'x' };
    for (let level = 0; level < 10; level += 1) shallow = { name: 'n', data: shallow };
    expect(() => walkFragments([shallow], { maxDepth: 5 })).toThrow('limit of 5 levels');
    expect(walkFragments([shallow], { maxDepth: 11 })).toHaveLength(1);
  });
});

class LinesRenderer extends TreeRenderer {
  readonly format = 'lines';
  protected renderNodes(nodes: readonly RenderNode[]): string {
    return nodes
      .map((node) =>
        node.kind === 'scalar'
          ? `${node.key}=${node.value}`
          : `${node.key}[${node.children.length}]`,
      )
      .join('\n');
  }
}

describe('TreeRenderer', () => {
  it('renders an empty list, or a list of only empty fragments, to an empty string', () => {
    const renderer = new LinesRenderer();
    expect(renderer.render([])).toBe('');
    expect(renderer.render([{ name: 'x', data: null }])).toBe('');
    expect(renderer.specificationVersion).toBe('v1');
  });

  it('hands the normalized tree to the format', () => {
    expect(new LinesRenderer().render([hint('a'), fragment('g', hint('b'), hint('c'))])).toBe(
      'hint=a\ng[2]',
    );
  });

  it('refuses a bad maxDepth when constructed', () => {
    expect(() => new LinesRenderer({ maxDepth: Number.NaN })).toThrow(
      'LinesRenderer(options): maxDepth must be a positive integer, received NaN.',
    );
  });

  it('passes maxDepth to the walk', () => {
    const deep = fragment('a', fragment('b', fragment('c', 'x')));
    expect(() => new LinesRenderer({ maxDepth: 2 }).render([deep])).toThrow('limit of 2 levels');
  });
});
