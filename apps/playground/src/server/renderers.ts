import type { ContextFragment, ContextRenderer } from '@ctxgraph/fragments-core';
import { MarkdownRenderer } from '@ctxgraph/renderer-markdown';
import { ToonRenderer } from '@ctxgraph/renderer-toon';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { RENDERER_NAMES, type RendererName } from '../shared/wire';

/** A system prompt as one renderer writes it, with its size. */
export interface PromptPreview {
  /** The renderer. */
  readonly renderer: RendererName;
  /** The rendered system prompt ('' when rendering failed). */
  readonly prompt: string;
  /** Its length in tokens (OpenAI o200k_base). */
  readonly tokens: number;
  /** Characters in the prompt. */
  readonly characters: number;
  /** Why rendering failed, or null. */
  readonly error: string | null;
}

const renderers: Record<RendererName, ContextRenderer> = {
  xml: new XmlRenderer(),
  markdown: new MarkdownRenderer(),
  toon: new ToonRenderer(),
};

/** The renderer called `name`. */
export function rendererFor(name: RendererName): ContextRenderer {
  return renderers[name];
}

/**
 * Renders the fragments with every renderer, so the page can show the prompts and their token
 * counts side by side. A renderer that refuses the input reports its message instead of failing
 * the request: the others still have something to show.
 */
export function renderPreviews(fragments: readonly ContextFragment[]): PromptPreview[] {
  return RENDERER_NAMES.map((name) => {
    try {
      const prompt = renderers[name].render([...fragments]);
      return {
        renderer: name,
        prompt,
        tokens: prompt === '' ? 0 : countTokens(prompt),
        characters: prompt.length,
        error: null,
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { renderer: name, prompt: '', tokens: 0, characters: 0, error: message };
    }
  });
}
