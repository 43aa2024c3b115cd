import {
  type RenderNode,
  TreeRenderer,
  type TreeRendererOptions,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { escapeMarkdownName, escapeMarkdownText } from './markdown-escape';

/** Options of {@link MarkdownRenderer}. */
export interface MarkdownRendererOptions extends TreeRendererOptions {
  /**
   * The heading level (1–6) of each top-level fragment.
   * @default 1
   */
  headingLevel?: number;
}

/**
 * Renders fragments as Markdown:
 *
 * - every top-level fragment opens a section headed by its name (`# role`); a text fragment's
 *   text is the section's body, a fragment holding data lists that data;
 * - below the heading, nesting is a bullet list indented by two spaces per level, so it goes as
 *   deep as the data does: `- key: value` for a named value, `- value` for a list item,
 *   `- key:` followed by the indented children for a named group, and `- ` followed by its first
 *   child for a list item that is itself an object or a list (`- - name: a`); an unnamed empty
 *   text or group shows as `- (empty)`, a named one as `- key:`;
 * - text is escaped so it stays content (see `escapeMarkdownText` / `escapeMarkdownName`).
 *
 * @example
 * ```ts
 * new MarkdownRenderer().render([role('You are a SQL expert.'), term('MRR', 'monthly recurring revenue')]);
 * // # role
 * // You are a SQL expert.
 * //
 * // # term
 * // - name: MRR
 * // - definition: monthly recurring revenue
 * ```
 */
export class MarkdownRenderer extends TreeRenderer {
  readonly format: 'markdown' = 'markdown';
  readonly #heading: string;

  constructor(options: MarkdownRendererOptions = {}) {
    super(options);
    this.#heading = '#'.repeat(headingLevel(options.headingLevel));
  }

  protected renderNodes(nodes: readonly RenderNode[]): string {
    const sections: string[] = [];
    for (const node of nodes) {
      // Top-level nodes are fragments, so they always have a name.
      const heading = `${this.#heading} ${escapeMarkdownName(node.key ?? '')}`;
      if (node.kind === 'scalar') {
        const text = String(node.value);
        sections.push(text === '' ? heading : `${heading}\n${escapeMarkdownText(text, '', false)}`);
      } else {
        const lines: string[] = [heading];
        for (const child of node.children) item(child, '', lines);
        sections.push(lines.join('\n'));
      }
    }
    return sections.join('\n\n');
  }
}

// What an unnamed empty text or empty group shows: a list item needs some text to be one.
const EMPTY = '(empty)';

function item(node: RenderNode, indent: string, lines: string[]): void {
  if (node.key === null && node.kind !== 'scalar' && node.children.length > 0) {
    // A list item that is itself a list or an object starts with its first child on the same
    // line (`- - a`): a bare `-` line cannot interrupt a paragraph in CommonMark, so it would
    // be read as a setext underline or as more text of the line before.
    const first = lines.length;
    const childIndent = `${indent}  `;
    for (const child of node.children) item(child, childIndent, lines);
    lines[first] = `${indent}- ${lines[first]!.slice(childIndent.length)}`;
    return;
  }
  const label = node.key === null ? '-' : `- ${escapeMarkdownName(node.key)}:`;
  if (node.kind === 'scalar') {
    const text = String(node.value);
    if (text === '') {
      lines.push(node.key === null ? `${indent}- ${EMPTY}` : `${indent}${label}`);
      return;
    }
    // The first line follows `- key: ` inline; after a bare `- ` it could open a block.
    lines.push(`${indent}${label} ${escapeMarkdownText(text, `${indent}  `, node.key !== null)}`);
    return;
  }
  if (node.children.length === 0) {
    lines.push(node.key === null ? `${indent}- ${EMPTY}` : `${indent}${label}`);
    return;
  }
  lines.push(`${indent}${label}`);
  for (const child of node.children) item(child, `${indent}  `, lines);
}

function headingLevel(level: number | undefined): number {
  if (level === undefined) return 1;
  if (!Number.isInteger(level) || level < 1 || level > 6) {
    throw new ValidationError(
      `MarkdownRenderer options.headingLevel must be an integer from 1 to 6, received ${String(level)}.`,
      { issues: [{ path: 'options.headingLevel', message: 'expected an integer from 1 to 6' }] },
    );
  }
  return level;
}
