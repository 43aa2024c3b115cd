import { ValidationError } from '@ctxgraph/fragments-core';

/** The default {@link TableNames} prefix. */
export const DEFAULT_TABLE_PREFIX = 'ctxgraph_';

/** The SQLite table and index names of one store, all starting with its table prefix. */
export interface TableNames {
  /** The prefix itself. */
  readonly prefix: string;
  /** Applied migration steps of this prefix (one row per step). */
  readonly migrations: string;
  /** Chats. */
  readonly chats: string;
  /** Message nodes. */
  readonly messages: string;
  /** Branches. */
  readonly branches: string;
  /** Checkpoints. */
  readonly checkpoints: string;
  /** Context lanes (one row per chat that saved one). */
  readonly contextLanes: string;
  /**
   * The FTS5 index of message words: each message's search tokens (the store kit's rule), kept
   * up to date lazily, by the first search of a chat after it changed.
   */
  readonly messageSearch: string;
  /** How far each chat's words are in {@link TableNames.messageSearch} (one row per searched chat). */
  readonly searchState: string;
  /** Live replies (capabilities.liveReplies): one row per reply being generated. */
  readonly liveReplies: string;
  /** The chunks of live replies, one row per appended batch. */
  readonly liveChunks: string;
  /** Each chat's count of live-reply writes that were not commits (one row per chat that had one). */
  readonly liveRevisions: string;
}

// A prefix is pasted into SQL as part of identifiers, so it is limited to characters that never
// need quoting: a letter or underscore first, then letters, digits and underscores.
const PREFIX_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,47}$/;

/**
 * Checks a table prefix and returns the table names built from it. Throws `ValidationError` when
 * the prefix is not 1 to 48 characters of letters, digits and underscores (not starting with a
 * digit), or starts with `sqlite_` (reserved by SQLite).
 *
 * @example
 * ```ts
 * tableNames('support_').chats; // 'support_chats'
 * ```
 */
export function tableNames(prefix: string = DEFAULT_TABLE_PREFIX): TableNames {
  if (
    typeof prefix !== 'string' ||
    !PREFIX_PATTERN.test(prefix) ||
    prefix.toLowerCase().startsWith('sqlite_')
  ) {
    const shown = typeof prefix === 'string' ? JSON.stringify(prefix) : typeof prefix;
    throw new ValidationError(
      `SqliteContextStore: tablePrefix ${shown} is not allowed. Use 1 to 48 letters, digits or underscores, not starting with a digit or "sqlite_" (for example "ctxgraph_").`,
      {
        issues: [
          {
            path: 'tablePrefix',
            message: 'expected [A-Za-z_][A-Za-z0-9_]{0,47}, not starting with sqlite_',
          },
        ],
      },
    );
  }
  return {
    prefix,
    migrations: `${prefix}migrations`,
    chats: `${prefix}chats`,
    messages: `${prefix}messages`,
    branches: `${prefix}branches`,
    checkpoints: `${prefix}checkpoints`,
    contextLanes: `${prefix}context_lanes`,
    messageSearch: `${prefix}message_search`,
    searchState: `${prefix}search_state`,
    liveReplies: `${prefix}live_replies`,
    liveChunks: `${prefix}live_chunks`,
    liveRevisions: `${prefix}live_revisions`,
  };
}
