import type { StoredMessage } from './records';

// The records of two optional store abilities that treat branches as objects of their own:
// full-text search (`capabilities.search`) and retention (`capabilities.retention`).

/** Input of `ContextStore.searchMessages`. */
export interface SearchMessagesInput {
  /**
   * Whose chats to search. Always required: a search only ever sees this user's chats, and a
   * `chatId` of another user's chat is refused with `OwnershipError`.
   */
  readonly userId: string;
  /**
   * The words to find. Every word must occur in a message's text (its `text` and `reasoning`
   * parts) for it to match, case-insensitively; punctuation and the operators `AND`, `OR`,
   * `NOT`, `NEAR`, `"`, `*`, `^`, `(`, `)`, `:`, `+`, `-` are ignored. A query with no word left
   * is refused with a `ValidationError`.
   */
  readonly query: string;
  /** Only this chat (it must belong to `userId`). @default every chat of the user */
  readonly chatId?: string;
  /**
   * Only the messages on this branch's chain (its head and every ancestor). Needs `chatId`;
   * an unknown branch is a `BranchNotFoundError`.
   */
  readonly branch?: string;
  /** Hits per page. @default 20 (at most 100) */
  readonly limit?: number;
  /** `nextCursor` of the previous page of the same search. */
  readonly cursor?: string;
}

/** One message a search found. */
export interface SearchHit {
  /** The chat it is in. */
  readonly chatId: string;
  /** The message (node) id. */
  readonly messageId: string;
  /** The message's role. */
  readonly role: string;
  /** The node's per-chat sequence. */
  readonly sequence: number;
  /**
   * How well it matches: higher is better. Comparable within one search only; each store has
   * its own scale (BM25 in SQLite, `ts_rank` in PostgreSQL, term frequency in memory).
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

/** Input of `ContextStore.prune`. */
export interface PruneInput {
  /** The chat. */
  readonly chatId: string;
  /**
   * Branches to delete in the same write, before reachability is worked out: their pointers go,
   * and so does every node that only they reached. Each must exist; no name twice.
   * @default none
   */
  readonly deleteBranches?: readonly string[];
  /**
   * The branch that becomes active when `deleteBranches` holds the active one (required then, and
   * must be a branch that stays). Refused when the active branch is not being deleted.
   */
  readonly activate?: string;
  /** Work out and report what would go, and change nothing. @default false */
  readonly dryRun?: boolean;
}

/** What `ContextStore.prune` removed (or, with `dryRun`, would remove). */
export interface PruneResult {
  /** The chat. */
  readonly chatId: string;
  /** True when nothing was changed. */
  readonly dryRun: boolean;
  /** The message nodes removed: those no branch head and no checkpoint reaches. */
  readonly nodes: number;
  /** The UTF-8 bytes of those nodes' stored message JSON. */
  readonly bytes: number;
  /** The branches deleted (the `deleteBranches` asked for, in that order). */
  readonly branches: readonly string[];
  /** The chat's active branch afterwards (or, with `dryRun`, as it would be). */
  readonly activeBranch: string;
}
