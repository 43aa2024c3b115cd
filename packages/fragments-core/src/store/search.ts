import type { StoredMessage } from './records';

// The records of the optional full-text search ability (`capabilities.search`).

/** Input of `ContextStore.searchMessages`. */
export interface SearchMessagesInput {
  /**
   * Whose chats to search. Always required: a search only ever sees this user's chats, and a
   * `chatId` of another user's chat is refused with `OwnershipError`.
   */
  readonly userId: string;
  /**
   * The words to find. One rule for every store (the store kit's `searchTokens`): a text is
   * folded (Unicode NFKD, combining marks removed, lower-cased) and its words are the maximal
   * runs of letters and digits (`\p{L}`, `\p{N}`); everything else separates words. A message
   * matches when each word of the query equals a word of its text (its `text` and `reasoning`
   * parts). So `jane` finds `jane.doe@example.com`, `report` finds `report_final.pdf`, `10.5`
   * finds `10.5` (as the words `10` and `5`), `istanbul` finds `İstanbul` and `cafe` finds
   * `café`; a word is never split further (`東京に` is one word, and so is `foo123`), and there
   * is no stemming, and no prefix matching unless `prefix` is set. The operator words `AND`, `OR`, `NOT`, `NEAR` written in
   * capitals are dropped, and punctuation never acts as an operator. A query with no word left is
   * refused with a `ValidationError`; at most 32 words are kept.
   */
  readonly query: string;
  /**
   * Search as you type: the **last** word of the query (after the operator words are dropped)
   * matches every word of a message that starts with it (`fib` finds `fibonacci` and `fib`),
   * the other words still match whole words only. The prefix is compared with the folded words
   * of the search rule (so `cafe` finds `caféteria`), character by character; its weight in the
   * score counts every word it starts (`f` = how many words of the message start with it). Only
   * for a store that declares `capabilities.searchPrefix`; others refuse it with
   * `ValidationError`. A cursor of a prefix search is refused by a whole-word search of the same
   * words and the other way round.
   * @default false (every word matches whole words only)
   */
  readonly prefix?: boolean;
  /** Only this chat (it must belong to `userId`). @default every chat of the user */
  readonly chatId?: string;
  /**
   * Only the messages on this branch's chain (its head and every ancestor). Needs `chatId`;
   * an unknown branch is a `BranchNotFoundError`.
   */
  readonly branch?: string;
  /** Hits per page. @default 20 (at most 100) */
  readonly limit?: number;
  /**
   * `nextCursor` of the previous page of the same search. It holds the sort key of that page's
   * last hit, so the next page starts after it: a message saved, replaced or pruned between
   * pages never makes a page skip or repeat a hit (a new message that ranks before the cursor is
   * simply not on the later pages). Opaque; a cursor of another search is a `ValidationError`.
   */
  readonly cursor?: string;
}

/** One message a search found. */
export interface SearchHit {
  /** The chat it is in. */
  readonly chatId: string;
  /**
   * The node id of the hit: the message id, except for a later version of a message, whose node
   * id differs; `message.id` is then the message id.
   */
  readonly messageId: string;
  /** The message's role. */
  readonly role: string;
  /** The node's per-chat sequence. */
  readonly sequence: number;
  /**
   * How well it matches: higher is better. The same number in every store (the store kit's
   * `searchScore`): for each query word, `(f × 2.2) / (f + 0.3 + 0.028125 × n)` summed, where
   * `f` is how often the word occurs in the message and `n` how many words the message has
   * (BM25's weighting with fixed parameters and no corpus statistics). It depends only on the
   * message and the query, so it does not move when other messages are saved.
   */
  readonly score: number;
  /** A short excerpt of the message's text around the first word found (at most about 160 characters). */
  readonly snippet: string;
  /**
   * The branches whose chain holds the message (its head or an ancestor of it), oldest first.
   * Empty when no branch reaches it any more (a checkpoint may).
   */
  readonly branches: readonly string[];
  /** The stored message. */
  readonly message: StoredMessage;
}
