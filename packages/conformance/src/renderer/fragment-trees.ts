import { type ContextFragment, type FragmentData, isFragment } from '@ctxgraph/fragments-core';

/** A generated fragment list and what a renderer must show of it. */
export interface GeneratedTree {
  /** The fragments, with `null` / `undefined` sprinkled in. */
  readonly fragments: ContextFragment[];
  /** The same fragments with every `null` / `undefined` removed by hand. */
  readonly cleaned: ContextFragment[];
  /** Every text and number leaf, as the text it must appear as (letters and digits only). */
  readonly leafTexts: readonly string[];
  /** Every fragment name and object key (letters and digits only). */
  readonly names: readonly string[];
  /** The first leaf text of each top-level fragment that holds one, in input order. */
  readonly firstLeafPerFragment: readonly string[];
}

// A small deterministic generator (mulberry32): the same seed always builds the same tree, so a
// failure can be replayed by its seed.
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

// Names come from a small pool so that siblings repeat names, consecutively and not, as real
// contexts do (thirty `hint`s in a row, a `term` between two `hint`s).
const fragmentNames = ['hint', 'term', 'rule', 'note', 'table'];

/**
 * Builds a varied fragment list from a seed: top-level fragments holding text, numbers,
 * booleans, objects, lists, lists of fragments and fragments as data, up to five levels deep.
 * Every text leaf is a unique token of letters and digits (`v12z`), every number a unique
 * seven-digit integer, every object key a unique token (`k7z`), so a test can look for each one in
 * any format's output without knowing how the format escapes.
 */
export function generateTree(seed: number): GeneratedTree {
  const next = random(seed);
  const pick = (count: number): number => Math.floor(next() * count);
  const leafTexts: string[] = [];
  const names: string[] = [];
  let counter = 0;
  // Marks a fragment that vanishes once its null data is dropped.
  const SKIP = Symbol('skip') as unknown as FragmentData;

  const leaf = (): { clean: FragmentData; text: string | null } => {
    counter++;
    const roll = pick(10);
    if (roll < 6) {
      const text = `v${seed}x${counter}z`;
      leafTexts.push(text);
      return { clean: text, text };
    }
    if (roll < 9) {
      const value = 1000000 + seed * 100000 + counter;
      leafTexts.push(String(value));
      return { clean: value, text: String(value) };
    }
    return { clean: next() < 0.5, text: null };
  };

  type Built = { dirty: FragmentData; clean: FragmentData };

  const value = (depth: number): Built => {
    const roll = depth >= 5 ? 0 : pick(5);
    if (roll <= 1) {
      const built = leaf();
      return { dirty: built.clean, clean: built.clean };
    }
    if (roll === 2) {
      const dirty: Record<string, FragmentData> = {};
      const clean: Record<string, FragmentData> = {};
      const size = 1 + pick(4);
      for (let index = 0; index < size; index++) {
        counter++;
        const key = `k${seed}x${counter}z`;
        if (next() < 0.2) {
          dirty[key] = next() < 0.5 ? null : undefined;
          continue;
        }
        const child = value(depth + 1);
        // The walk shows a fragment held by an object under the fragment's own name, not the key.
        if (!isFragment(child.clean)) names.push(key);
        dirty[key] = child.dirty;
        clean[key] = child.clean;
      }
      return { dirty, clean };
    }
    if (roll === 3) {
      const dirty: FragmentData[] = [];
      const clean: FragmentData[] = [];
      const size = pick(5);
      for (let index = 0; index < size; index++) {
        if (next() < 0.2) {
          dirty.push(next() < 0.5 ? null : undefined);
          continue;
        }
        const child = next() < 0.3 ? fragment(depth + 1) : value(depth + 1);
        dirty.push(child.dirty);
        if (child.clean !== SKIP) clean.push(child.clean);
      }
      return { dirty, clean };
    }
    const child = fragment(depth + 1, false);
    return child;
  };

  const fragment = (depth: number, mayBeEmpty = true): Built => {
    const name = fragmentNames[pick(fragmentNames.length)]!;
    if (mayBeEmpty && next() < 0.15) {
      return { dirty: { name, data: next() < 0.5 ? null : undefined }, clean: SKIP };
    }
    names.push(name);
    const data = value(depth);
    return { dirty: { name, data: data.dirty }, clean: { name, data: data.clean } };
  };

  const fragments: ContextFragment[] = [];
  const cleaned: ContextFragment[] = [];
  const firstLeafPerFragment: string[] = [];
  const size = 1 + pick(8);
  for (let index = 0; index < size; index++) {
    const before = leafTexts.length;
    const built = fragment(1);
    fragments.push(built.dirty as ContextFragment);
    if (built.clean !== SKIP) cleaned.push(built.clean as ContextFragment);
    if (leafTexts.length > before) firstLeafPerFragment.push(leafTexts[before]!);
  }
  return { fragments, cleaned, leafTexts, names, firstLeafPerFragment };
}

/**
 * A fragment nested `depth` levels deep through fragments, lists or objects, built without
 * recursion so that building it cannot overflow the stack. The innermost value is `leaf`.
 */
export function nestedTree(
  depth: number,
  through: 'fragment' | 'list' | 'object',
  leaf: string,
): ContextFragment {
  let data: FragmentData = leaf;
  for (let level = 0; level < depth; level++) {
    if (through === 'fragment') data = { name: 'level', data };
    else if (through === 'list') data = [data];
    else data = { level: data };
  }
  return { name: 'deep', data };
}

/** Text that is likely to break a format that does not escape it. */
export const hostileTexts: readonly string[] = [
  '<script>alert("x") & more</script>',
  ']]> <![CDATA[ x ]]>',
  '"double" \'single\' `back`',
  '# heading\n## another',
  '```js\nconsole.log(1)\n```',
  '~~~\nfenced\n~~~',
  '- item\n* item\n+ item',
  '1. first\n2) second',
  '> quoted\n>> twice',
  '---\n===\n***\n___',
  '| a | b |\n|---|---|',
  'key: value\n  nested: deeper',
  'a,b,c\td|e',
  '[3]: x,y,z',
  '{braces} [brackets]',
  '-',
  '#',
  'true',
  'false',
  'null',
  '42',
  '-1.5e3',
  '',
  '   padded   ',
  'line one\r\nline two\rline three\n\nline five',
  'back\\slash \\n not a newline',
  'control \u0001 \u0007 \u001f characters',
  '\t\ttabbed',
  '<!-- comment --> <?xml version="1.0"?> <!DOCTYPE x>',
  '&amp; &#60; &lt;',
];

/** Names (fragment names and object keys) that are not plain identifiers. */
export const hostileNames: readonly string[] = [
  'has space',
  '1starts with digit',
  'xmlReserved',
  'XML',
  'colon:name',
  '<tag>',
  'quote"name',
  'émoji 🙂',
  'dash-and.dot',
  '-leading-dash',
  '.leading-dot',
  'new\nline',
  '# hash',
  '[0]',
  'a,b',
  '__proto__',
  'constructor',
  'name (2)',
  '',
];

/** Text in many scripts; every one must come out unchanged. */
export const unicodeTexts: readonly string[] = [
  'こんにちは世界',
  'Ελληνικά γράμματα',
  'العربية لغة',
  'עברית',
  'Кириллица',
  '한국어',
  'हिन्दी',
  'café naïve',
  'e\u0301 combining',
  '🙂👍🏽🇩🇪',
  '👨‍👩‍👧 family',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𠜎',
];

/**
 * A deep copy of plain objects and arrays (own enumerable keys, `undefined` kept), so a test can
 * render an equal tree made of different objects. `structuredClone` is not used because the kit
 * must not assume a runtime's globals.
 */
export function deepCopy<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => deepCopy(item)) as T;
  if (typeof value === 'object' && value !== null) {
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      Object.defineProperty(copy, key, {
        value: deepCopy((value as Record<string, unknown>)[key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return copy as T;
  }
  return value;
}
