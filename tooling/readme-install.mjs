// What a README tells a user to install, read from its sections as written, for the scripts that
// follow it (the consumer test) or print a line to match it (the release rehearsal's `--out`).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './workspace.mjs';

/**
 * The text of a README's `## <heading>` section (its `###` subsections included), or '' when it
 * has none.
 * @param {string} markdown
 * @param {string} heading
 * @returns {string}
 */
export function readmeSection(markdown, heading) {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.trim() === `## ${heading}`);
  if (start === -1) return '';
  const end = lines.findIndex((line, index) => index > start && /^## /.test(line));
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}

/**
 * The words of the first `npm install` line of `markdown` (package names, tarball paths), without
 * options; [] when it has none.
 * @param {string} markdown
 * @returns {string[]}
 */
export function firstInstallLine(markdown) {
  const match = /^\s*npm (?:install|i|add)\s+([^\n#]+)/m.exec(markdown);
  return (match?.[1] ?? '')
    .trim()
    .split(/\s+/)
    .filter((word) => word !== '' && !word.startsWith('-'));
}

/**
 * The package.json fields of the first ```json block of `markdown` (the `overrides` a README
 * tells a user to add, say); {} when it has none.
 * @param {string} markdown
 * @returns {Record<string, unknown>}
 */
export function firstJsonBlock(markdown) {
  const match = /^```json\s*\n([\s\S]*?)^```\s*$/m.exec(markdown);
  return match?.[1] === undefined ? {} : JSON.parse(match[1]);
}

/**
 * The root README's install line: the packages its "Install" section installs, in order.
 * @param {string} [checkout] default: this repository
 * @returns {string[]}
 */
export function rootInstallLine(checkout = root) {
  return firstInstallLine(
    readmeSection(readFileSync(join(checkout, 'README.md'), 'utf8'), 'Install'),
  );
}
