import type { Tokenizer } from '@ctxgraph/fragments-core';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';

/**
 * OpenAI's `cl100k_base` encoding (GPT-4, GPT-3.5-turbo and OpenAI's text-embedding-3 models) as a ctxgraph {@link Tokenizer}: exact counts for
 * those models, a close estimate for others. Give it to the engine
 * (`new ContextEngine({ tokenizer: cl100kTokenizer })`) for budgets, cache plans and `inspect()`.
 *
 * @example
 * ```ts
 * cl100kTokenizer.count('Hello, world!');
 * ```
 */
export const cl100kTokenizer: Tokenizer = Object.freeze({
  specificationVersion: 'v1',
  id: 'cl100k_base',
  count: (text: string): number => countTokens(text),
});
