/// <reference types="node" />
import { defineRendererConformance, rendererSampleFragments } from '@ctxgraph/conformance';
import { expectGolden as compareGolden } from '@ctxgraph/conformance/golden';
import { type ContextFragment, RenderError, ValidationError } from '@ctxgraph/fragments-core';
import { type Node, Parser } from 'commonmark';
import { describe, expect, it } from 'vitest';

const expectGolden = (file: string, output: string): void =>
  compareGolden(new URL(`./__fixtures__/${file}`, import.meta.url), output);

import { escapeMarkdownLine, escapeMarkdownName, escapeMarkdownText } from './markdown-escape';
import { MarkdownRenderer } from './markdown-renderer';

const parser = new Parser();

function children(node: Node): Node[] {
  const nodes: Node[] = [];
  for (let child = node.firstChild; child; child = child.next) nodes.push(child);
  return nodes;
}

/** The literal text of a node: text, code and breaks joined as a reader would see them. */
function textOf(node: Node): string {
  let text = '';
  const walker = node.walker();
  for (let event = walker.next(); event; event = walker.next()) {
    if (!event.entering) continue;
    const current = event.node;
    if (current.type === 'text' || current.type === 'code' || current.type === 'html_inline')
      text += current.literal ?? '';
    else if (current.type === 'softbreak' || current.type === 'linebreak') text += '\n';
  }
  return text;
}

/**
 * Structural validity of the renderer's output: level-1 headings only at the top, and none of
 * the blocks user text could open if it were not escaped (quotes, fences, HTML blocks, breaks).
 */
function validate(output: string): Node {
  const document = parser.parse(output);
  const walker = document.walker();
  for (let event = walker.next(); event; event = walker.next()) {
    if (!event.entering) continue;
    const node = event.node;
    if (node.type === 'heading' && (node.parent?.type !== 'document' || node.level !== 1)) {
      throw new Error(`a heading that is not a top-level section: ${textOf(node)}`);
    }
    if (
      node.type === 'block_quote' ||
      node.type === 'html_block' ||
      node.type === 'thematic_break'
    ) {
      throw new Error(`user text opened a ${node.type}`);
    }
    if (node.type === 'code_block' && node.info !== null)
      throw new Error('user text opened a code fence');
  }
  return document;
}

const render = (fragments: ContextFragment[]): string => new MarkdownRenderer().render(fragments);

defineRendererConformance({
  name: 'MarkdownRenderer',
  createRenderer: () => new MarkdownRenderer(),
  validateOutput: (output) => {
    validate(output);
  },
});

describe('MarkdownRenderer', () => {
  it("has format 'markdown'", () => {
    expect(new MarkdownRenderer().format).toBe('markdown');
  });

  it('matches the golden file for the shared sample', () => {
    expectGolden('sample.golden.md', render(rendererSampleFragments()));
  });

  it('heads each top-level fragment and lists nested data', () => {
    const output = render([
      { name: 'role', data: 'Analyst' },
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
      { name: 'matrix', data: [[1, 2], [{ x: 3 }], []] },
    ]);
    expect(output).toBe(
      [
        '# role',
        'Analyst',
        '',
        '# database',
        '- hint: PostgreSQL',
        '- tables:',
        '  - users:',
        '    - columns:',
        '      - id',
        '      - email',
        '    - rows: 3',
        '',
        '# matrix',
        '- - 1',
        '  - 2',
        '- - - x: 3',
        '- (empty)',
      ].join('\n'),
    );
    const document = validate(output);
    const blocks = children(document);
    expect(blocks.map((block) => block.type)).toStrictEqual([
      'heading',
      'paragraph',
      'heading',
      'list',
      'heading',
      'list',
    ]);
    const tables = children(children(blocks[3]!)[1]!);
    expect(textOf(tables[0]!)).toBe('tables:');
    expect(tables[1]!.type).toBe('list');
  });

  it('renders empty text and empty groups as a bare label, or (empty) when unnamed', () => {
    expect(
      render([
        { name: 'a', data: { text: '', list: [] } },
        { name: 'b', data: '' },
      ]),
    ).toBe('# a\n- text:\n- list:\n\n# b');
    const output = render([{ name: 'a', data: ['x', '', [], 'y'] }]);
    expect(output).toBe('# a\n- x\n- (empty)\n- (empty)\n- y');
    expect(children(children(validate(output))[1]!)).toHaveLength(4);
  });

  it('uses the heading level it is given and refuses one outside 1–6', () => {
    expect(new MarkdownRenderer({ headingLevel: 3 }).render([{ name: 'a', data: 'x' }])).toBe(
      '### a\nx',
    );
    for (const headingLevel of [0, 7, 1.5, Number.NaN]) {
      expect(() => new MarkdownRenderer({ headingLevel })).toThrow(ValidationError);
      expect(() => new MarkdownRenderer({ headingLevel })).toThrow(
        /headingLevel must be an integer from 1 to 6/,
      );
    }
  });

  it('refuses trees deeper than maxDepth with a RenderError naming the limit', () => {
    const renderer = new MarkdownRenderer({ maxDepth: 2 });
    expect(renderer.render([{ name: 'a', data: { b: 'x' } }])).toBe('# a\n- b: x');
    expect(() => renderer.render([{ name: 'a', data: { b: { c: { d: 'x' } } } }])).toThrow(
      RenderError,
    );
    expect(() => renderer.render([{ name: 'a', data: { b: { c: { d: 'x' } } } }])).toThrow(
      /limit of 2/,
    );
  });
});

describe('Markdown escaping', () => {
  it.each([
    ['# heading', '\\# heading'],
    ['  ## indented heading', '  \\## indented heading'],
    ['> quote', '\\> quote'],
    ['- item', '\\- item'],
    ['+ item', '\\+ item'],
    ['* item', '\\* item'],
    ['1. first', '1\\. first'],
    ['12) twelfth', '12\\) twelfth'],
    ['```js', '\\```js'],
    ['~~~', '\\~~~'],
    ['---', '\\---'],
    ['--', '\\--'],
    ['- - -', '\\- - -'],
    ['#', '\\#'],
    ['####### seven', '####### seven'],
    ['#hashtag', '#hashtag'],
    ['-42', '-42'],
    ['3.25', '3.25'],
    ['**bold** start', '**bold** start'],
    ['1.', '1\\.'],
    ['===', '\\==='],
    ['___', '\\___'],
    ['<div>', '\\<div>'],
    ['| a | b |', '\\| a | b |'],
    ['\t- tabbed item', '\t\\- tabbed item'],
    ['plain text # not at start', 'plain text # not at start'],
    ['2024 was a year', '2024 was a year'],
    ['', ''],
  ])('escapeMarkdownLine(%j) is %j', (line, expected) => {
    expect(escapeMarkdownLine(line)).toBe(expected);
  });

  it('escapes every line of multi-line text and indents it under its list item', () => {
    expect(escapeMarkdownText('first\r\n# second\r- third\n\n> fifth', '  ', true)).toBe(
      'first\n  \\# second\n  \\- third\n\n  \\> fifth',
    );
    expect(escapeMarkdownText('# first', '', false)).toBe('\\# first');
  });

  it('keeps names on one line and makes the first unescaped colon end them', () => {
    expect(escapeMarkdownName('a:b')).toBe('a\\:b');
    expect(escapeMarkdownName('new\nline')).toBe('new line');
    expect(escapeMarkdownName('# tag #')).toBe('\\# tag \\#');
    expect(escapeMarkdownName('- dash')).toBe('\\- dash');
    expect(escapeMarkdownName('ends\\')).toBe('ends\\\\');
    expect(escapeMarkdownName('a\\*b\\c')).toBe('a\\\\*b\\c');
  });

  const hostile = [
    '# heading\n## another',
    '```js\nconsole.log(1)\n```',
    '~~~\nfenced',
    '- item\n* item\n+ item',
    '1. first\n2) second',
    '> quoted\n>> twice',
    '---\n===\n***\n___',
    'Title\n===',
    'Title\n---',
    '<pre>\nraw\n</pre>',
    '<div>\n\nafter a blank line',
    '| a | b |\n|---|---|',
    'paragraph\n\n# after a blank line',
    '    indented four',
  ];

  it.each(hostile)('keeps %j inside a top-level section', (text) => {
    const output = render([
      { name: 'text', data: text },
      { name: 'after', data: 'sentinel' },
    ]);
    const blocks = children(validate(output));
    const headings = blocks
      .filter((block) => block.type === 'heading')
      .map((block) => textOf(block));
    expect(headings).toStrictEqual(['text', 'after']);
    expect(textOf(blocks.at(-1)!)).toBe('sentinel');
  });

  it.each(hostile)('keeps %j inside its list item, named or not', (text) => {
    for (const data of [[text, 'sentinel'], { value: text, next: 'sentinel' }]) {
      const blocks = children(validate(render([{ name: 'list', data }])));
      expect(blocks.map((block) => block.type)).toStrictEqual(['heading', 'list']);
      const items = children(blocks[1]!);
      expect(items).toHaveLength(2);
      expect(textOf(items[1]!)).toMatch(/sentinel$/);
    }
  });

  it('shows escaped names as the original to a Markdown reader', () => {
    const names = ['a:b', 'ends\\', 'back\\:slash', '# hash #', '1. one', '- dash', 'x\\*y'];
    const data: Record<string, string> = {};
    for (const name of names) data[name] = 'v';
    const items = children(children(validate(render([{ name: 'names', data }])))[1]!);
    expect(items.map((item) => textOf(item))).toStrictEqual(names.map((name) => `${name}: v`));
  });

  it('shows escaped text as the original to a Markdown reader', () => {
    const texts = ['# heading', '> quote', '- item', '1. first', '```', '<div>', 'a: b'];
    const output = render([{ name: 'list', data: texts }]);
    const items = children(children(validate(output))[1]!);
    expect(items.map((item) => textOf(item))).toStrictEqual(texts);
  });
});
