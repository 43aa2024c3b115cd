import {
  type ContextFragment,
  type ContextRenderer,
  RenderError,
  withBudget,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  deepCopy,
  generateTree,
  hostileNames,
  hostileTexts,
  nestedTree,
  unicodeTexts,
} from './fragment-trees';
import { rendererSampleFragments } from './renderer-sample';

/** Options of {@link defineRendererConformance}. */
export interface RendererConformanceOptions {
  /** Shown in the suite title: `ContextRenderer conformance: <name>`. */
  name: string;
  /** Returns a new renderer with default options. Called once per test. */
  createRenderer: () => ContextRenderer;
  /**
   * Throws when `output` is not valid in the renderer's format (parse it with a real parser).
   * Runs on every output the kit produces, hostile text included. Skipped checks when absent.
   */
  validateOutput?: (output: string) => void;
  /**
   * How many generated fragment trees the leaf, null and determinism checks run on.
   * @default 40
   */
  generatedTrees?: number;
}

/**
 * Defines the vitest suites every `ContextRenderer` must pass, whatever its format: contract
 * version, empty input, determinism, every leaf shown, `null` / `undefined` skipped, input order
 * kept, very deep or cyclic trees refused with a `RenderError` (never a stack overflow),
 * unicode unchanged, values it cannot show refused, and (when `validateOutput` is given) valid
 * output for hostile text and names.
 *
 * Leaves are checked format-neutrally: the generated trees hold only tokens of letters and
 * digits (`v3x17z`, `1300017`), which no format needs to escape, so each must appear verbatim.
 *
 * @example
 * ```ts
 * import { defineRendererConformance } from '@ctxgraph/conformance';
 * import { XMLParser, XMLValidator } from 'fast-xml-parser';
 *
 * defineRendererConformance({
 *   name: 'XmlRenderer',
 *   createRenderer: () => new XmlRenderer(),
 *   validateOutput: (output) => {
 *     const result = XMLValidator.validate(`<root>${output}</root>`);
 *     if (result !== true) throw new Error(result.err.msg);
 *   },
 * });
 * ```
 */
export function defineRendererConformance(options: RendererConformanceOptions): void {
  const { createRenderer, validateOutput } = options;
  const seeds = Array.from({ length: options.generatedTrees ?? 40 }, (_, index) => index + 1);
  const render = (fragments: readonly ContextFragment[]): string => {
    const output = createRenderer().render(fragments);
    expect(typeof output).toBe('string');
    if (output !== '') validateOutput?.(output);
    return output;
  };

  describe(`ContextRenderer conformance: ${options.name}`, () => {
    describe('contract', () => {
      it("declares specificationVersion 'v1' and a format name", () => {
        const renderer = createRenderer();
        expect(renderer.specificationVersion).toBe('v1');
        expect(typeof renderer.format).toBe('string');
        expect(renderer.format.length).toBeGreaterThan(0);
      });

      it("renders an empty list to ''", () => {
        expect(createRenderer().render([])).toBe('');
      });

      it("renders a list of fragments that only hold null or undefined to ''", () => {
        expect(
          createRenderer().render([
            { name: 'a', data: null },
            { name: 'b', data: undefined },
          ]),
        ).toBe('');
      });
    });

    describe('determinism', () => {
      it('renders the same input to the same bytes, across calls, instances and copies', () => {
        for (const seed of seeds) {
          const { fragments } = generateTree(seed);
          const renderer = createRenderer();
          const first = renderer.render(fragments);
          renderer.render(generateTree(seed + 1000).fragments);
          expect(renderer.render(fragments), `seed ${seed}`).toBe(first);
          expect(createRenderer().render(deepCopy(fragments)), `seed ${seed}`).toBe(first);
        }
      });

      it('renders the golden sample the same way twice', () => {
        expect(render(rendererSampleFragments())).toBe(render(rendererSampleFragments()));
        expect(render(rendererSampleFragments())).not.toContain('[object Object]');
      });

      it('ignores budget settings: a fragment renders the same with or without withBudget()', () => {
        // The engine renders fragments one by one to count them for resolve({ budget }), and
        // the whole kept list to send; neither may depend on priority or required marks.
        const plain = rendererSampleFragments();
        const marked = rendererSampleFragments().map((fragment, index) =>
          withBudget(fragment, { priority: index - 2, required: index % 2 === 0 }),
        );
        expect(render(marked)).toBe(render(plain));
        plain.forEach((fragment, index) => {
          expect(render([marked[index] as ContextFragment])).toBe(render([fragment]));
        });
      });

      it('does not change its input', () => {
        const fragments = rendererSampleFragments();
        const copy = deepCopy(fragments);
        render(fragments);
        expect(fragments).toStrictEqual(copy);
      });
    });

    describe('content', () => {
      it('shows every text and number leaf and every name of generated trees', () => {
        for (const seed of seeds) {
          const tree = generateTree(seed);
          const output = render(tree.fragments);
          for (const text of tree.leafTexts)
            expect(output, `seed ${seed}: leaf ${text}`).toContain(text);
          for (const name of tree.names)
            expect(output, `seed ${seed}: name ${name}`).toContain(name);
          expect(output, `seed ${seed}`).not.toContain('[object Object]');
        }
      });

      it('shows booleans, zero, negative and fractional numbers', () => {
        const output = render([
          { name: 'flags', data: { on: true, off: false } },
          { name: 'numbers', data: [0, -42, 3.25] },
        ]);
        for (const text of ['true', 'false', '0', '-42', '3.25']) expect(output).toContain(text);
      });

      it('skips null and undefined exactly as if they were absent', () => {
        for (const seed of seeds) {
          const tree = generateTree(seed);
          expect(render(tree.fragments), `seed ${seed}`).toBe(render(tree.cleaned));
        }
      });

      it('keeps top-level fragments in input order, repeated names included', () => {
        for (const seed of seeds) {
          const tree = generateTree(seed);
          const output = render(tree.fragments);
          const positions = tree.firstLeafPerFragment.map((text) => output.indexOf(text));
          expect(positions, `seed ${seed}`).toStrictEqual([...positions].sort((a, b) => a - b));
        }
        const interleaved: ContextFragment[] = [
          { name: 'hint', data: 'alpha1' },
          { name: 'term', data: 'bravo2' },
          { name: 'hint', data: 'charlie3' },
          { name: 'hint', data: 'delta4' },
          { name: 'term', data: 'echo5' },
        ];
        const output = render(interleaved);
        const positions = ['alpha1', 'bravo2', 'charlie3', 'delta4', 'echo5'].map((text) =>
          output.indexOf(text),
        );
        expect(positions.every((position) => position >= 0)).toBe(true);
        expect(positions).toStrictEqual([...positions].sort((a, b) => a - b));
      });

      it('renders many fragments with the same name', () => {
        const fragments = Array.from({ length: 200 }, (_, index) => ({
          name: 'hint',
          data: `tip${index}q`,
        }));
        const output = render(fragments);
        for (let index = 0; index < 200; index++) expect(output).toContain(`tip${index}q`);
      });

      it('keeps unicode text and names unchanged', () => {
        const output = render([
          ...unicodeTexts.map((text) => ({ name: 'text', data: text })),
          { name: 'names', data: { 名前: 'value1', ключ: 'value2', όνομα: 'value3' } },
        ]);
        for (const text of unicodeTexts) expect(output).toContain(text);
        for (const name of ['名前', 'ключ', 'όνομα']) expect(output).toContain(name);
      });

      it('renders hostile text and names without throwing (and validly, when validateOutput is given)', () => {
        const byText = render(hostileTexts.map((text) => ({ name: 'text', data: text })));
        expect(byText.length).toBeGreaterThan(0);
        const asList = render([{ name: 'list', data: [...hostileTexts] }]);
        expect(asList.length).toBeGreaterThan(0);
        const byName: ContextFragment[] = hostileNames.map((name, index) => ({
          name,
          data: `n${index}q`,
        }));
        const keyed: Record<string, string> = {};
        hostileNames.forEach((name, index) => {
          Object.defineProperty(keyed, name, {
            value: `k${index}q`,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        });
        const output = render([...byName, { name: 'object', data: keyed }]);
        hostileNames.forEach((_, index) => {
          expect(output).toContain(`n${index}q`);
          expect(output).toContain(`k${index}q`);
        });
      });
    });

    describe('limits and refusals', () => {
      it('renders twenty levels of nesting with the innermost leaf', () => {
        for (const through of ['fragment', 'list', 'object'] as const) {
          expect(render([nestedTree(20, through, 'bottom7q')]), through).toContain('bottom7q');
        }
      });

      it('refuses (or renders) 100 000 levels of nesting with a RenderError that names the limit, never a stack overflow', () => {
        for (const through of ['fragment', 'list', 'object'] as const) {
          const fragments = [nestedTree(100_000, through, 'bottom7q')];
          let output: string | undefined;
          let failure: unknown;
          try {
            output = createRenderer().render(fragments);
          } catch (error) {
            failure = error;
          }
          if (failure === undefined) {
            expect(output, through).toContain('bottom7q');
          } else {
            expect(failure, through).not.toBeInstanceOf(RangeError);
            expect(RenderError.isInstance(failure), `${through}: ${String(failure)}`).toBe(true);
            expect((failure as Error).message, through).toMatch(/limit/i);
            expect((failure as Error).message, through).toMatch(/\d/);
          }
        }
      });

      it('refuses a cycle with a RenderError', () => {
        const looped: Record<string, unknown> = { label: 'loop' };
        looped.self = looped;
        const list: unknown[] = ['first'];
        list.push(list);
        for (const data of [looped, list]) {
          expect(() =>
            createRenderer().render([{ name: 'cyclic', data } as ContextFragment]),
          ).toThrow(expect.objectContaining({ name: 'RenderError' }));
        }
      });

      it('refuses values no format can show, and things that are not fragments, with a RenderError', () => {
        const bad: unknown[] = [
          [{ name: 'fn', data: () => 1 }],
          [{ name: 'symbol', data: Symbol('s') }],
          [{ name: 'map', data: { inner: new Map([['a', 1]]) } }],
          [{ name: 'instance', data: [new (class Point {})()] }],
          [42],
          [{ data: 'no name' }],
        ];
        for (const fragments of bad) {
          let failure: unknown;
          try {
            createRenderer().render(fragments as ContextFragment[]);
          } catch (error) {
            failure = error;
          }
          expect(RenderError.isInstance(failure), String(failure)).toBe(true);
        }
      });
    });
  });
}
