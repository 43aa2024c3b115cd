import type { ContextFragment, ContextRenderer, Tokenizer } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { segmentHash } from '../cache/segment-hash';

/** A counted message: its tokens (text plus a per-message overhead) and the hash of its bytes. */
export interface CountedMessage {
  readonly id: string;
  readonly role: string;
  readonly tokens: number;
  readonly hash: string;
}

/** A counted fragment, rendered alone. */
export interface CountedFragment {
  readonly tokens: number;
  readonly hash: string;
}

/**
 * Tokens a message costs beyond its text (role and framing). Providers differ (OpenAI's chat
 * format adds 3–4); the budget errs on the safe side.
 */
const MESSAGE_OVERHEAD_TOKENS = 4;

/** How many counted texts {@link TokenCounter.text} keeps (the plans of one call render a few). */
const TEXTS_KEPT = 4;

/** The text a message contributes to a prompt: its text parts, and other parts as JSON. */
export function messageText(message: UIMessage): string {
  return message.parts
    .map((part) =>
      part.type === 'text' || part.type === 'reasoning' ? part.text : JSON.stringify(part),
    )
    .join('\n');
}

/**
 * Counts and hashes messages and fragments once per object and tokenizer id. The engine's
 * messages are frozen and kept across resolves, so a warm budgeted resolve counts only what is
 * new; the last list is remembered by position, so the common case (the same messages plus a
 * few) is a pointer comparison per message.
 */
export class TokenCounter {
  readonly #messages = new Map<string, WeakMap<UIMessage, CountedMessage>>();
  readonly #fragments = new Map<
    string,
    WeakMap<ContextRenderer, WeakMap<ContextFragment, CountedFragment>>
  >();
  #lastKey = '';
  #lastList: UIMessage[] = [];
  #lastCounts: CountedMessage[] = [];
  /** The last few texts counted (system prompts), for the tokenizer id in `#textsKey`. */
  readonly #texts = new Map<string, number>();
  #textsKey = '';

  /** Counts of `messages`, in order. The array is reused by the next call: read it at once. */
  messages(tokenizer: Tokenizer, messages: readonly UIMessage[]): CountedMessage[] {
    const key = tokenizer.id;
    if (key !== this.#lastKey) {
      this.#lastKey = key;
      this.#lastList = [];
      this.#lastCounts = [];
    }
    let cache = this.#messages.get(key);
    if (cache === undefined) {
      cache = new WeakMap();
      this.#messages.set(key, cache);
    }
    const list = this.#lastList;
    const counts = this.#lastCounts;
    for (let index = 0; index < messages.length; index += 1) {
      const message = messages[index] as UIMessage;
      if (list[index] === message) continue;
      let counted = cache.get(message);
      if (counted === undefined) {
        counted = {
          id: message.id,
          role: message.role,
          tokens: tokenizer.count(messageText(message)) + MESSAGE_OVERHEAD_TOKENS,
          hash: segmentHash(JSON.stringify(message)),
        };
        cache.set(message, counted);
      }
      list[index] = message;
      counts[index] = counted;
    }
    list.length = messages.length;
    counts.length = messages.length;
    return counts;
  }

  /**
   * The count of a text (a rendered system prompt). The last few are kept per tokenizer id, so a
   * prompt that did not change is not counted again, and a tokenizer whose id changed (an
   * estimator after `calibrate()`) counts afresh.
   */
  text(tokenizer: Tokenizer, text: string): number {
    if (tokenizer.id !== this.#textsKey) {
      this.#textsKey = tokenizer.id;
      this.#texts.clear();
    }
    let tokens = this.#texts.get(text);
    if (tokens === undefined) {
      tokens = tokenizer.count(text);
      if (this.#texts.size >= TEXTS_KEPT) {
        for (const oldest of this.#texts.keys()) {
          this.#texts.delete(oldest);
          break;
        }
      }
      this.#texts.set(text, tokens);
    }
    return tokens;
  }

  /** The count of one fragment rendered alone by `renderer`. */
  fragment(
    tokenizer: Tokenizer,
    renderer: ContextRenderer,
    fragment: ContextFragment,
  ): CountedFragment {
    let byRenderer = this.#fragments.get(tokenizer.id);
    if (byRenderer === undefined) {
      byRenderer = new WeakMap();
      this.#fragments.set(tokenizer.id, byRenderer);
    }
    let cache = byRenderer.get(renderer);
    if (cache === undefined) {
      cache = new WeakMap();
      byRenderer.set(renderer, cache);
    }
    let counted = cache.get(fragment);
    if (counted === undefined) {
      const text = renderer.render([fragment]);
      counted = { tokens: tokenizer.count(text), hash: segmentHash(text) };
      cache.set(fragment, counted);
    }
    return counted;
  }
}
