import {
  type RenderNode,
  TreeRenderer,
  type TreeRendererOptions,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { DELIMITERS, encode } from '@toon-format/toon';

/** A TOON value: what {@link toToonValue} builds and `@toon-format/toon` encodes. */
export type ToonValue = string | number | boolean | ToonValue[] | { [key: string]: ToonValue };

/** Options of {@link ToonRenderer}. */
export interface ToonRendererOptions extends TreeRendererOptions {
  /**
   * The separator of tabular rows and inline lists. On prose-heavy context the comma measured
   * cheapest in o200k tokens (texts holding a comma get quoted); a tab or pipe suits data full of
   * commas.
   * @default 'comma'
   */
  delimiter?: 'comma' | 'tab' | 'pipe';
  /**
   * Spaces per nesting level (1–8). Decode the output with the same `indentSize`.
   * @default 2
   */
  indentSize?: number;
}

/**
 * Builds the JSON-model value a fragment tree stands for, the input of the TOON encoder:
 *
 * - a text, number or boolean stays itself;
 * - a group whose children all have names (the fields of an object, a fragment holding an
 *   object, a list of fragments) becomes an object keyed by those names;
 * - a group with unnamed children (a list of values) becomes a list; a named child in such a
 *   list becomes a one-key object `{ name: value }`;
 * - siblings that share a name cannot share a key, so a run of consecutive siblings with the same
 *   name becomes one key holding the list of their values (30 `hint` fragments in a row become
 *   `hint[30]: …`), and a name that comes back after other siblings gets the first free key of
 *   `name (2)`, `name (3)`, … . Order is kept and the result is the same for the same input;
 * - a lone UTF-16 surrogate (half of an emoji, cut) becomes U+FFFD, because TOON text, like
 *   JSON text, must be well-formed Unicode.
 */
export function toToonValue(node: RenderNode): ToonValue {
  if (node.kind === 'scalar')
    return typeof node.value === 'string' ? wellFormed(node.value) : node.value;
  const children = node.children;
  if (children.length === 0) return node.kind === 'object' ? {} : [];
  if (children.every((child) => child.key !== null)) return toObject(children);
  return children.map((child) => {
    const value = toToonValue(child);
    return child.key === null ? value : objectWith(child.key, value);
  });
}

/**
 * Builds the object of named siblings (see {@link toToonValue} for how repeated names are
 * kept apart).
 */
export function toObject(nodes: readonly RenderNode[]): { [key: string]: ToonValue } {
  const taken = new Set<string>();
  for (const node of nodes) taken.add(wellFormed(node.key ?? ''));
  const result: { [key: string]: ToonValue } = {};
  const used = new Set<string>();
  // Where the search for a free `name (n)` resumes, per name. The keys free for a name only ever
  // get fewer (a numbered key is used once, and the names in `taken` never free up), so the first
  // free counter never goes down: resuming from the last one gives the same keys in linear time,
  // where starting from 2 each time made 20,000 alternating siblings take seconds.
  const nextCounter = new Map<string, number>();
  let index = 0;
  while (index < nodes.length) {
    const name = wellFormed(nodes[index]!.key ?? '');
    let end = index + 1;
    while (end < nodes.length && wellFormed(nodes[end]!.key ?? '') === name) end++;
    const value =
      end - index === 1
        ? toToonValue(nodes[index]!)
        : nodes.slice(index, end).map((node) => toToonValue(node));
    let key = name;
    if (used.has(key)) {
      let counter = nextCounter.get(name) ?? 2;
      while (used.has(`${name} (${counter})`) || taken.has(`${name} (${counter})`)) counter++;
      key = `${name} (${counter})`;
      nextCounter.set(name, counter + 1);
    }
    used.add(key);
    define(result, key, value);
    index = end;
  }
  return result;
}

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const anySurrogate = /[\uD800-\uDFFF]/;

function wellFormed(text: string): string {
  // The cheap test first: almost no text holds a surrogate at all.
  return anySurrogate.test(text) ? text.replace(loneSurrogate, '\uFFFD') : text;
}

function objectWith(key: string, value: ToonValue): { [key: string]: ToonValue } {
  const result: { [key: string]: ToonValue } = {};
  define(result, wellFormed(key), value);
  return result;
}

function define(target: { [key: string]: ToonValue }, key: string, value: ToonValue): void {
  if (key === '__proto__') {
    // A plain assignment would replace the prototype instead of adding the key.
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    target[key] = value;
  }
}

/**
 * Renders fragments as TOON (Token-Oriented Object Notation) with `@toon-format/toon`: the
 * fragments become one object keyed by fragment name (see {@link toToonValue}), so uniform lists
 * of objects (terms, examples, guardrails) come out as compact tables. The output decodes with
 * the same library's `decode()` (pass the same `indentSize` if you changed it).
 *
 * @example
 * ```ts
 * new ToonRenderer().render([role('You are a SQL expert.'), hint('Use CTEs.'), hint('Be brief.')]);
 * // role: You are a SQL expert.
 * // hint[2]: Use CTEs.,Be brief.
 * ```
 */
export class ToonRenderer extends TreeRenderer {
  readonly format: 'toon' = 'toon';
  readonly #delimiter: (typeof DELIMITERS)[keyof typeof DELIMITERS];
  readonly #indentSize: number;

  constructor(options: ToonRendererOptions = {}) {
    super(options);
    const delimiter = options.delimiter ?? 'comma';
    if (!Object.hasOwn(DELIMITERS, delimiter)) {
      throw new ValidationError(
        `ToonRenderer options.delimiter must be 'comma', 'tab' or 'pipe', received ${JSON.stringify(delimiter)}.`,
        { issues: [{ path: 'options.delimiter', message: "expected 'comma', 'tab' or 'pipe'" }] },
      );
    }
    const indentSize = options.indentSize ?? 2;
    if (!Number.isInteger(indentSize) || indentSize < 1 || indentSize > 8) {
      throw new ValidationError(
        `ToonRenderer options.indentSize must be an integer from 1 to 8, received ${String(indentSize)}.`,
        { issues: [{ path: 'options.indentSize', message: 'expected an integer from 1 to 8' }] },
      );
    }
    this.#delimiter = DELIMITERS[delimiter];
    this.#indentSize = indentSize;
  }

  // The last value encoded, as JSON text, and its TOON output. A conversation renders the same
  // context on every turn, and the encoder costs far more than building the value; JSON text of
  // the value is an exact key because the output depends on nothing else.
  #lastValue: string | undefined;
  #lastOutput = '';

  protected renderNodes(nodes: readonly RenderNode[]): string {
    const value = toObject(nodes);
    const key = JSON.stringify(value);
    if (key === this.#lastValue) return this.#lastOutput;
    const output = encode(value, { delimiter: this.#delimiter, indentSize: this.#indentSize });
    this.#lastValue = key;
    this.#lastOutput = output;
    return output;
  }
}
