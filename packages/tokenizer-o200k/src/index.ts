import type { Tokenizer } from '@ctxgraph/fragments-core';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

/**
 * OpenAI's `o200k_base` encoding (GPT-4o, GPT-4.1, GPT-5, o3, o4-mini) as a ctxgraph {@link Tokenizer}: exact counts for
 * those models, a close estimate for others. Give it to the engine
 * (`new ContextEngine({ tokenizer: o200kTokenizer })`) for budgets, cache plans and `inspect()`.
 *
 * @example
 * ```ts
 * o200kTokenizer.count('Hello, world!');
 * ```
 */
export const o200kTokenizer: Tokenizer = Object.freeze({
  specificationVersion: 'v1',
  id: 'o200k_base',
  count: (text: string): number => countTokens(text),
});
