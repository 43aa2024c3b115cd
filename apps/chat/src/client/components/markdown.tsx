import DOMPurify from 'dompurify';
import { Marked } from 'marked';
import { useMemo } from 'react';

const escapes: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** `text` with the characters HTML treats as markup escaped. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => escapes[character] ?? character);
}

/**
 * The model's Markdown as HTML. HTML the model writes (a block or an inline tag) is shown as the
 * text it is, never as markup: a reply is data, not part of the page.
 */
const markdown = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html: ({ text }) => escapeHtml(text),
  },
});

// Links a reply contains open outside the chat, without handing it the page (`window.opener`).
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/**
 * `text` rendered as Markdown to sanitised HTML: marked's output (with the model's own HTML
 * escaped) passed through DOMPurify, which also drops `javascript:` links and event attributes
 * Markdown could smuggle in.
 */
export function renderMarkdown(text: string): string {
  // Without the newline marked ends each block with: a one-paragraph reply's text is the reply's.
  const html = markdown.parse(text, { async: false }).trim();
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true } });
}

/** Props of {@link Markdown}. */
export interface MarkdownProps {
  /** The Markdown source (an assistant message's text part, possibly still streaming). */
  text: string;
}

/** Assistant text rendered as Markdown (GitHub flavoured), sanitised; raw HTML shown as text. */
export function Markdown({ text }: MarkdownProps) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  // biome-ignore lint/security/noDangerouslySetInnerHtml: sanitised by renderMarkdown (DOMPurify), the model's HTML escaped first.
  return <div className="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
}
