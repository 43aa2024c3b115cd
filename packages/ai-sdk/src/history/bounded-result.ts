// Every result of the history tools is bounded in tokens, counted by the engine's tokenizer on the
// JSON the model is given. Items are kept in order of importance until the next would not fit;
// the result says when something was left out or cut.
import type { Tokenizer } from '@ctxgraph/fragments-core';

/** The mark at the end of a text that was cut to fit. */
export const CUT_MARK = ' …[cut]';

/** The tokens of `value` as the model is given it (its JSON). */
function tokensOf(tokenizer: Tokenizer, value: unknown): number {
  return tokenizer.count(JSON.stringify(value));
}

/**
 * `text` cut to at most `maxTokens` tokens (by `tokenizer`), with {@link CUT_MARK} when cut. A
 * cut never splits a surrogate pair. Counting is bounded: a text far longer than the room (more
 * than 32 characters a token) is shortened before it is counted.
 */
export function cutText(
  tokenizer: Tokenizer,
  text: string,
  maxTokens: number,
): { readonly text: string; readonly cut: boolean } {
  const roughLimit = maxTokens * 32;
  const candidate = text.length > roughLimit ? text.slice(0, roughLimit) : text;
  if (candidate === text && tokenizer.count(text) <= maxTokens) return { text, cut: false };
  // The longest prefix whose text plus the mark fits: a binary search over its length.
  let low = 0;
  let high = candidate.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (tokenizer.count(candidate.slice(0, middle) + CUT_MARK) <= maxTokens) low = middle;
    else high = middle - 1;
  }
  let end = low;
  const last = candidate.charCodeAt(end - 1);
  if (end > 0 && last >= 0xd800 && last <= 0xdbff) end -= 1;
  return { text: end === 0 ? CUT_MARK.trim() : candidate.slice(0, end) + CUT_MARK, cut: true };
}

/**
 * The most items, taken in the order given (most important first), whose result fits in
 * `maxTokens`: `build(kept, leftOut)` makes the result from the kept items (in the order given)
 * and whether any was left out. Counts each item once, then checks the whole result, leaving one
 * more item out while it does not fit (a tokenizer need not add up over JSON pieces).
 */
export function fitItems<Item, Result>(
  tokenizer: Tokenizer,
  maxTokens: number,
  items: readonly Item[],
  build: (kept: readonly Item[], leftOut: boolean) => Result,
): { readonly result: Result; readonly kept: readonly Item[]; readonly leftOut: boolean } {
  const frame = tokensOf(tokenizer, build([], true));
  let total = frame;
  let count = 0;
  for (const item of items) {
    const cost = tokensOf(tokenizer, item) + 1;
    if (total + cost > maxTokens) break;
    total += cost;
    count += 1;
  }
  for (;;) {
    const kept = items.slice(0, count);
    const leftOut = count < items.length;
    const result = build(kept, leftOut);
    if (count === 0 || tokensOf(tokenizer, result) <= maxTokens) return { result, kept, leftOut };
    count -= 1;
  }
}
