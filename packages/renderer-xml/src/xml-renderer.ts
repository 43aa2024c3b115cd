import {
  type RenderNode,
  TreeRenderer,
  type TreeRendererOptions,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { toXmlName } from './xml-name';

/** Options of {@link XmlRenderer}. */
export interface XmlRendererOptions extends TreeRendererOptions {
  /**
   * Spaces added per nesting level (0–8). `0` puts every tag at the start of its line: the tags already
   * carry the nesting, and indentation only costs tokens.
   * @default 0
   */
  indent?: number;
}

// Characters XML 1.0 does not allow anywhere, not even as character references: C0 controls
// other than tab, newline and carriage return, lone surrogates, U+FFFE and U+FFFF.
const forbiddenCharacters =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const textSpecials = /[&<\r]|]]>/g;
// Anything escapeXmlText might change: the specials, C0 controls, U+FFFE/U+FFFF, any surrogate.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const needsTextEscape = /[&<\u0000-\u0008\u000B-\u001F\uFFFE\uFFFF\uD800-\uDFFF]|]]>/;
const attributeSpecials = /[&<"\t\n\r]/g;

const textReplacements: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '\r': '&#13;',
  ']]>': ']]&gt;',
};
const attributeReplacements: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '"': '&quot;',
  '\t': '&#9;',
  '\n': '&#10;',
  '\r': '&#13;',
};

/**
 * Escapes text for an XML element's content: `&` and `<` always, `>` only where it would close a
 * CDATA marker (`]]>`), carriage returns as `&#13;` (a parser would otherwise fold `\r\n` into
 * `\n`), and characters XML forbids become U+FFFD.
 */
export function escapeXmlText(text: string): string {
  // Most text needs nothing: one scan decides, and the replacements run only when needed.
  if (!needsTextEscape.test(text)) return text;
  return text
    .replace(forbiddenCharacters, '\uFFFD')
    .replace(textSpecials, (match) => textReplacements[match] ?? match);
}

/** Escapes text for a double-quoted attribute value (whitespace kept as character references). */
export function escapeXmlAttribute(text: string): string {
  return text
    .replace(forbiddenCharacters, '\uFFFD')
    .replace(attributeSpecials, (match) => attributeReplacements[match] ?? match);
}

/**
 * The element name for an unnamed list item, from its list's element name: a plural English
 * name loses its ending (`steps` → `step`, `categories` → `category`); anything else gives
 * `item`.
 */
export function itemElementName(listName: string): string {
  if (listName.length > 3 && listName.endsWith('ies')) return `${listName.slice(0, -3)}y`;
  if (listName.length > 1 && /[^su]s$/.test(listName) && !listName.endsWith('is')) {
    return listName.slice(0, -1);
  }
  return 'item';
}

/**
 * Renders fragments as XML elements:
 *
 * - a fragment becomes an element named after it, holding its text or its children;
 * - object entries become elements named after their keys; list items take the singular of the
 *   list's name (`steps` → `<step>`, otherwise `<item>`);
 * - names that are not valid XML names are made valid (see `toXmlName`) and the original is kept
 *   in a `name="…"` attribute;
 * - text is escaped (see `escapeXmlText`), so the output is well-formed once wrapped in one root
 *   element (a prompt holds several top-level elements side by side).
 *
 * @example
 * ```ts
 * new XmlRenderer().render([role('You are a SQL expert.'), hint('Use CTEs.')]);
 * // <role>You are a SQL expert.</role>
 * // <hint>Use CTEs.</hint>
 * ```
 */
export class XmlRenderer extends TreeRenderer {
  readonly format: 'xml' = 'xml';
  readonly #indent: number;

  constructor(options: XmlRendererOptions = {}) {
    super(options);
    const indent = options.indent ?? 0;
    if (!Number.isInteger(indent) || indent < 0 || indent > 8) {
      throw new ValidationError(
        `XmlRenderer options.indent must be an integer from 0 to 8, received ${String(indent)}.`,
        {
          issues: [{ path: 'options.indent', message: 'expected an integer from 0 to 8' }],
        },
      );
    }
    this.#indent = indent;
  }

  protected renderNodes(nodes: readonly RenderNode[]): string {
    const lines: string[] = [];
    for (const node of nodes) this.#node(node, 'item', 0, lines);
    return lines.join('\n');
  }

  #node(node: RenderNode, listName: string, depth: number, lines: string[]): void {
    const pad = this.#indent === 0 ? '' : ' '.repeat(this.#indent * depth);
    let name: string;
    let attributes = '';
    if (node.key === null) {
      name = itemElementName(listName);
    } else {
      name = toXmlName(node.key);
      if (name !== node.key) attributes = ` name="${escapeXmlAttribute(node.key)}"`;
    }
    if (node.kind === 'scalar') {
      lines.push(`${pad}<${name}${attributes}>${escapeXmlText(String(node.value))}</${name}>`);
      return;
    }
    if (node.children.length === 0) {
      lines.push(`${pad}<${name}${attributes}></${name}>`);
      return;
    }
    lines.push(`${pad}<${name}${attributes}>`);
    for (const child of node.children) this.#node(child, name, depth + 1, lines);
    lines.push(`${pad}</${name}>`);
  }
}
