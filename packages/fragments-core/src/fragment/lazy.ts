import { ValidationError } from '../errors/errors';
import { describeValue } from '../rules/paths';
import type { ContextFragment } from './context-fragment';

/**
 * The key under which a lazy fragment keeps what the engine needs to resolve it. A registered
 * symbol, so two copies of this package agree on it.
 */
export const LAZY_ID: unique symbol = Symbol.for('ctxgraph.lazy-id');

/** What a lazy fragment asks the engine to do at save time. */
export interface LazyConfig {
  /** `'last-assistant'`: become the latest assistant message on the branch. */
  readonly type: 'last-assistant';
  /** The text of the message. */
  readonly content: string;
}

/** A message fragment whose id is found by the engine when it is saved (or resolved). */
export interface LazyFragment extends ContextFragment<string> {
  readonly [LAZY_ID]: LazyConfig;
}

/**
 * An assistant message that replaces the latest assistant message on the branch: pending ones
 * first (newest first), then persisted ones. When there is none, it becomes a new message.
 * Use it for retry and self-correction flows.
 *
 * @example
 * ```ts
 * engine.set(lastAssistantMessage('Corrected: the answer is 4.'));
 * await engine.save(); // overwrites the previous assistant reply in place
 * ```
 */
export function lastAssistantMessage(content: string): LazyFragment {
  if (typeof content !== 'string') {
    throw new ValidationError(
      `lastAssistantMessage(content): content must be a string, received ${describeValue(content)}.`,
      {
        issues: [
          { path: 'content', message: `expected string, received ${describeValue(content)}` },
        ],
      },
    );
  }
  return {
    name: 'assistant',
    type: 'message',
    persist: true,
    data: content,
    [LAZY_ID]: { type: 'last-assistant', content },
  };
}
