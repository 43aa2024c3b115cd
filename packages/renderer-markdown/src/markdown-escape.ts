// Line starts that open a Markdown block and would lift user text out of the place it was put.
// Each is checked after the line's leading spaces and tabs.
const blockStarts: readonly RegExp[] = [
  /^[>|<]/, // block quote, table row, HTML block
  /^#{1,6}(?:[ \t]|$)/, // ATX heading
  /^[-+*](?:[ \t]|$)/, // bullet list item
  /^(?:[-*_][ \t]*){3,}$/, // thematic break
  /^(?:=+|-+)[ \t]*$/, // setext heading underline
  /^(?:`{3,}|~{3,})/, // code fence
];
// The first non-blank character of every line that can open a block (a cheap pre-check).
const mayOpenBlock = /^[ \t]*[>|<#\-+*_=`~0-9]/;
const orderedListStart = /^(\d{1,9})([.)])(?:[ \t]|$)/;
const lineBreak = /\r\n|\r|\n/;

/**
 * Escapes one line of text so that it cannot open a Markdown block. When, after its leading
 * whitespace, the line starts a block quote, table row or HTML block (`>`, `|`, `<`), an ATX
 * heading (`# `), a bullet item (`- `, `+ `, `* `), a thematic break (`***`, `- - -`), a setext
 * underline (`===`, `--`) or a code fence (` ``` `, `~~~`), a backslash goes before its first
 * character; an ordered-list marker gets it before its delimiter (`1. x` → `1\. x`). A backslash
 * before ASCII punctuation is a CommonMark escape, so a Markdown reader still shows the original
 * character; text that opens no block (`-42`, `#hashtag`, `**bold**`) is left as it is.
 */
export function escapeMarkdownLine(line: string): string {
  // Fast path: most lines start with a letter, which opens no block.
  if (!mayOpenBlock.test(line)) return line;
  const start = line.length - line.trimStart().length;
  const rest = line.slice(start);
  if (rest === '') return line;
  const ordered = orderedListStart.exec(rest);
  if (ordered) return `${line.slice(0, start)}${ordered[1]}\\${rest.slice(ordered[1]!.length)}`;
  for (const pattern of blockStarts) {
    if (pattern.test(rest)) return `${line.slice(0, start)}\\${rest}`;
  }
  return line;
}

/**
 * Escapes text that may span several lines. Every line is escaped with
 * {@link escapeMarkdownLine} (except the first when `firstLineInline`, because it follows
 * `key: ` on its line and cannot open a block), and lines after the first are indented by
 * `indent` so they stay inside the list item they belong to. Line breaks (`\r\n`, `\r`, `\n`)
 * come out as `\n`.
 */
export function escapeMarkdownText(text: string, indent: string, firstLineInline: boolean): string {
  const lines = text.split(lineBreak);
  let output = firstLineInline ? lines[0]! : escapeMarkdownLine(lines[0]!);
  for (let index = 1; index < lines.length; index++) {
    const line = lines[index]!;
    output += line === '' ? '\n' : `\n${indent}${escapeMarkdownLine(line)}`;
  }
  return output;
}

// Characters escapeMarkdownName may change wherever they are in the name.
const nameSpecials = /[\r\n:\\]|#$/;

/**
 * Escapes a name (fragment name or object key) shown as `name:` in a list item or as a heading:
 * line breaks become spaces (a name is one line); a backslash that would escape what follows it
 * (ASCII punctuation, or the end of the name, which the `:` separator follows) is doubled; `:`
 * becomes `\:` so the first unescaped `: ` always ends the name; a leading block marker is
 * escaped, and so is a trailing `#`, so a heading keeps it.
 */
export function escapeMarkdownName(name: string): string {
  if (!nameSpecials.test(name) && !mayOpenBlock.test(name)) return name;
  const oneLine = name.replace(/\r\n|\r|\n/g, ' ');
  const backslashes = oneLine.replace(/\\(?=[!-/:-@[-`{-~]|$)/g, '\\\\');
  let escaped = escapeMarkdownLine(backslashes.replace(/:/g, '\\:'));
  if (escaped.endsWith('#') && !escaped.endsWith('\\#')) escaped = `${escaped.slice(0, -1)}\\#`;
  return escaped;
}
