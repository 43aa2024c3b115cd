export { escapeMarkdownLine, escapeMarkdownName, escapeMarkdownText } from './markdown-escape';
export { MarkdownRenderer, type MarkdownRendererOptions } from './markdown-renderer';
