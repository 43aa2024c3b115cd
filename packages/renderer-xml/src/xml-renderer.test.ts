/// <reference types="node" />
import { defineRendererConformance, rendererSampleFragments } from '@ctxgraph/conformance';
import { expectGolden as compareGolden } from '@ctxgraph/conformance/golden';
import { type ContextFragment, RenderError, ValidationError } from '@ctxgraph/fragments-core';
import { DOMParser, type Element } from '@xmldom/xmldom';
import { describe, expect, it } from 'vitest';

const expectGolden = (file: string, output: string): void =>
  compareGolden(new URL(`./__fixtures__/${file}`, import.meta.url), output);

import { toXmlName } from './xml-name';
import { escapeXmlAttribute, escapeXmlText, itemElementName, XmlRenderer } from './xml-renderer';

/**
 * Parses the output inside one root element with a strict parser: any error fails. (Warnings
 * are not about well-formedness; xmldom warns about every U+FFFD, which the escaping puts in.)
 */
function parse(output: string): Element {
  const parser = new DOMParser({
    onError: (level, message) => {
      if (level !== 'warning') throw new Error(`XML ${level}: ${message}`);
    },
  });
  const document = parser.parseFromString(`<root>${output}</root>`, 'text/xml');
  return document.documentElement!;
}

function childElements(element: Element): Element[] {
  const elements: Element[] = [];
  for (let node = element.firstChild; node; node = node.nextSibling) {
    if (node.nodeType === 1) elements.push(node as Element);
  }
  return elements;
}

const render = (fragments: ContextFragment[]): string => new XmlRenderer().render(fragments);

defineRendererConformance({
  name: 'XmlRenderer',
  createRenderer: () => new XmlRenderer(),
  validateOutput: (output) => {
    parse(output);
  },
});

describe('XmlRenderer', () => {
  it("has format 'xml'", () => {
    expect(new XmlRenderer().format).toBe('xml');
  });

  it('matches the golden file for the shared sample', () => {
    expectGolden('sample.golden.xml', render(rendererSampleFragments()));
  });

  it('matches the golden file with indentation', () => {
    expectGolden(
      'sample-indented.golden.xml',
      new XmlRenderer({ indent: 2 }).render(rendererSampleFragments()),
    );
  });

  it('nests fragments, objects and lists as elements', () => {
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
    ]);
    expect(output).toBe(
      [
        '<role>Analyst</role>',
        '<database>',
        '<hint>PostgreSQL</hint>',
        '<tables>',
        '<users>',
        '<columns>',
        '<column>id</column>',
        '<column>email</column>',
        '</columns>',
        '<rows>3</rows>',
        '</users>',
        '</tables>',
        '</database>',
      ].join('\n'),
    );
  });

  it('renders empty groups and empty text as empty elements', () => {
    expect(
      render([
        { name: 'list', data: [] },
        { name: 'text', data: '' },
      ]),
    ).toBe('<list></list>\n<text></text>');
  });

  it('indents by the given number of spaces per level', () => {
    expect(new XmlRenderer({ indent: 2 }).render([{ name: 'a', data: { b: { c: 'x' } } }])).toBe(
      '<a>\n  <b>\n    <c>x</c>\n  </b>\n</a>',
    );
  });

  it('refuses an indent that is not an integer from 0 to 8 with a ValidationError', () => {
    for (const indent of [-1, 9, 1.5, Number.NaN]) {
      expect(() => new XmlRenderer({ indent })).toThrow(ValidationError);
      expect(() => new XmlRenderer({ indent })).toThrow(
        /options.indent must be an integer from 0 to 8/,
      );
    }
  });

  it('refuses trees deeper than maxDepth with a RenderError naming the limit', () => {
    const renderer = new XmlRenderer({ maxDepth: 3 });
    expect(renderer.render([{ name: 'a', data: { b: 'x' } }])).toBe('<a>\n<b>x</b>\n</a>');
    const tooDeep: ContextFragment[] = [{ name: 'a', data: { b: { c: { d: { e: 'x' } } } } }];
    expect(() => renderer.render(tooDeep)).toThrow(RenderError);
    expect(() => renderer.render(tooDeep)).toThrow(/limit of 3/);
  });
});

describe('XML escaping', () => {
  it('escapes & and < in text, and > only where it would close ]]>', () => {
    expect(escapeXmlText('a & b < c > d ]]> e')).toBe('a &amp; b &lt; c > d ]]&gt; e');
  });

  it('round-trips hostile text through a real parser', () => {
    const texts = [
      '<script>alert("x")</script> & &amp; &#60;',
      ']]> <![CDATA[ x ]]>',
      '"double" \'single\'',
      '<!-- comment --> <?xml version="1.0"?>',
      'line one\r\nline two\rline three\n',
      '\ttab and trailing space ',
    ];
    const root = parse(render(texts.map((text) => ({ name: 'text', data: text }))));
    expect(childElements(root).map((element) => element.textContent)).toStrictEqual(texts);
  });

  it('replaces characters XML forbids with U+FFFD', () => {
    expect(escapeXmlText('a\u0000b\u0001c\u000bd\uFFFEe')).toBe('a\uFFFDb\uFFFDc\uFFFDd\uFFFDe');
    expect(escapeXmlText('lone \uD800 high, lone \uDC00 low, pair \uD83D\uDE42')).toBe(
      'lone \uFFFD high, lone \uFFFD low, pair 🙂',
    );
    const root = parse(render([{ name: 'text', data: 'bell\u0007 nul\u0000' }]));
    expect(root.textContent).toBe('bell\uFFFD nul\uFFFD');
  });

  it('escapes attribute values, keeping whitespace as character references', () => {
    expect(escapeXmlAttribute('a"b<c&d\te\nf\rg>')).toBe('a&quot;b&lt;c&amp;d&#9;e&#10;f&#13;g>');
  });
});

describe('XML names', () => {
  it.each([
    ['hint', 'hint'],
    ['table_billing_0', 'table_billing_0'],
    ['dash-and.dot', 'dash-and.dot'],
    ['名前', '名前'],
    ['has space', 'has_space'],
    ['colon:name', 'colon_name'],
    ['<tag>', '_tag_'],
    ['émoji 🙂', 'émoji_🙂'],
    ['tab\there', 'tab_here'],
    ['1st place', '_1st_place'],
    ['-leading', '_-leading'],
    ['.leading', '_.leading'],
    ['xmlReserved', '_xmlReserved'],
    ['XML', '_XML'],
    ['', '_'],
    ['\uD800lone', '_lone'],
  ])('toXmlName(%j) is %j', (name, expected) => {
    expect(toXmlName(name)).toBe(expected);
  });

  it('keeps the original name in a name attribute when it had to change it', () => {
    const names = ['has space', 'colon:name', 'quote"name', 'new\nline', '1st', 'xml', ''];
    const root = parse(
      render([
        { name: 'keys', data: Object.fromEntries(names.map((name, index) => [name, `v${index}`])) },
      ]),
    );
    const elements = childElements(childElements(root)[0]!);
    expect(elements.map((element) => element.getAttribute('name'))).toStrictEqual(names);
    expect(elements.map((element) => element.textContent)).toStrictEqual(
      names.map((_, index) => `v${index}`),
    );
    expect(render([{ name: 'plain', data: 'x' }])).toBe('<plain>x</plain>');
  });

  it.each([
    ['steps', 'step'],
    ['tables', 'table'],
    ['categories', 'category'],
    ['status', 'item'],
    ['analysis', 'item'],
    ['address', 'item'],
    ['data', 'item'],
    ['s', 'item'],
  ])('names the items of %j %j', (list, item) => {
    expect(itemElementName(list)).toBe(item);
  });

  it('names items of nested lists and of a list named after a sanitized name', () => {
    expect(render([{ name: 'matrix', data: [[1, 2], [{ x: 3 }]] }])).toBe(
      '<matrix>\n<item>\n<item>1</item>\n<item>2</item>\n</item>\n<item>\n<item>\n<x>3</x>\n</item>\n</item>\n</matrix>',
    );
    expect(render([{ name: 'my rows', data: ['a'] }])).toBe(
      '<my_rows name="my rows">\n<my_row>a</my_row>\n</my_rows>',
    );
  });
});
