import { ValidationError } from '@ctxgraph/fragments-core';

/** PostgreSQL truncates identifiers longer than this many bytes, so we refuse them instead. */
const MAX_POSTGRES_IDENTIFIER_BYTES = 63;

/**
 * The longest name the schema derives from the table prefix is `<prefix>checkpoints_message_fkey`
 * (25 characters after the prefix); the prefix limit keeps every derived name within 63 bytes.
 */
export const MAX_TABLE_PREFIX_LENGTH = 32;

const IDENTIFIER_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Where the store's tables live and what they are called. */
export interface TableNameOptions {
  /** The PostgreSQL schema. @default 'public' */
  readonly schema?: string;
  /** Prepended to every table, index and constraint name. @default 'ctxgraph_' */
  readonly tablePrefix?: string;
  /**
   * Used only by the schema step that added search in an earlier version (`search and
   * retention`), which the next step undoes. Search follows the one rule every store shares
   * (`SearchMessagesInput.query`): a stemming configuration would find what the other stores do
   * not, so the store no longer uses PostgreSQL's text search parser at all.
   * @deprecated No effect on search; still checked, so a bad value is reported.
   * @default 'simple'
   */
  readonly searchLanguage?: string;
}

/** The quoted, schema-qualified names every statement of the store uses. */
export interface TableNames {
  /** The schema, unquoted (validated). */
  readonly schema: string;
  /** The table prefix, unquoted (validated). */
  readonly tablePrefix: string;
  /** The schema, quoted. */
  readonly quotedSchema: string;
  /** `"schema"."<prefix>migrations"`. */
  readonly migrations: string;
  /** `"schema"."<prefix>chats"`. */
  readonly chats: string;
  /** `"schema"."<prefix>messages"`. */
  readonly messages: string;
  /** `"schema"."<prefix>branches"`. */
  readonly branches: string;
  /** `"schema"."<prefix>checkpoints"`. */
  readonly checkpoints: string;
  /** `"schema"."<prefix>context_lanes"`. */
  readonly contextLanes: string;
  /** `"schema"."<prefix>search_words"`: each searched message's words (the search index). */
  readonly searchWords: string;
  /** `"schema"."<prefix>search_state"`: how far each searched chat is indexed. */
  readonly searchState: string;
  /** `"schema"."<prefix>live_replies"`: the replies being generated (capabilities.liveReplies). */
  readonly liveReplies: string;
  /** `"schema"."<prefix>live_chunks"`: their chunks, one row per appended batch. */
  readonly liveChunks: string;
  /** `"schema"."<prefix>live_revisions"`: each chat's count of live-reply writes that were not commits. */
  readonly liveRevisions: string;
  /**
   * The `LISTEN` / `NOTIFY` channel of the change feed: one per schema and table prefix,
   * `ctxgraph_` and a hash of both (a channel name is an identifier, at most 63 bytes).
   */
  readonly changeChannel: string;
  /** Quotes `<prefix><suffix>` for an index or constraint name (never schema-qualified). */
  readonly local: (suffix: string) => string;
  /** The text search configuration as a SQL literal: `'simple'::regconfig`. */
  readonly searchConfig: string;
}

/** The default schema. */
export const DEFAULT_SCHEMA = 'public';
/** The default table prefix. */
export const DEFAULT_TABLE_PREFIX = 'ctxgraph_';
/** The default text search configuration. */
export const DEFAULT_SEARCH_LANGUAGE = 'simple';

// A configuration name, optionally schema-qualified (`pg_catalog.english`).
const SEARCH_LANGUAGE_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/;

/** 64 bits of FNV-1a over the UTF-16 code units of `text`, as 16 hex digits. */
function channelHash(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= BigInt(text.charCodeAt(index));
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, '0');
}

function quote(identifier: string): string {
  // The pattern already excludes quotes; doubling them keeps this safe on its own as well.
  return `"${identifier.replaceAll('"', '""')}"`;
}

/**
 * Validates `schema` and `tablePrefix` (letters, digits and underscores, not starting with a
 * digit; the schema at most 63 bytes, the prefix at most {@link MAX_TABLE_PREFIX_LENGTH}, and
 * may be empty) and derives the quoted names. Throws `ValidationError` naming the option.
 */
export function resolveTableNames(method: string, options: TableNameOptions = {}): TableNames {
  const schema = options.schema ?? DEFAULT_SCHEMA;
  const tablePrefix = options.tablePrefix ?? DEFAULT_TABLE_PREFIX;
  if (
    typeof schema !== 'string' ||
    !IDENTIFIER_PATTERN.test(schema) ||
    schema.length > MAX_POSTGRES_IDENTIFIER_BYTES
  ) {
    const message = `expected letters, digits or underscores, not starting with a digit, at most ${MAX_POSTGRES_IDENTIFIER_BYTES} characters; received ${JSON.stringify(schema)}`;
    throw new ValidationError(`${method}: schema ${message}.`, {
      issues: [{ path: 'schema', message }],
    });
  }
  if (
    typeof tablePrefix !== 'string' ||
    (tablePrefix !== '' && !IDENTIFIER_PATTERN.test(tablePrefix)) ||
    tablePrefix.length > MAX_TABLE_PREFIX_LENGTH
  ) {
    const message = `expected an empty string or letters, digits or underscores, not starting with a digit, at most ${MAX_TABLE_PREFIX_LENGTH} characters; received ${JSON.stringify(tablePrefix)}`;
    throw new ValidationError(`${method}: tablePrefix ${message}.`, {
      issues: [{ path: 'tablePrefix', message }],
    });
  }
  const searchLanguage = options.searchLanguage ?? DEFAULT_SEARCH_LANGUAGE;
  if (
    typeof searchLanguage !== 'string' ||
    !SEARCH_LANGUAGE_PATTERN.test(searchLanguage) ||
    searchLanguage.length > MAX_POSTGRES_IDENTIFIER_BYTES * 2 + 1
  ) {
    const message = `expected the name of a text search configuration such as 'simple' or 'english' (letters, digits, underscores, optionally schema.name); received ${JSON.stringify(searchLanguage)}`;
    throw new ValidationError(`${method}: searchLanguage ${message}.`, {
      issues: [{ path: 'searchLanguage', message }],
    });
  }
  const quotedSchema = quote(schema);
  const table = (name: string): string => `${quotedSchema}.${quote(`${tablePrefix}${name}`)}`;
  return {
    schema,
    tablePrefix,
    quotedSchema,
    migrations: table('migrations'),
    chats: table('chats'),
    messages: table('messages'),
    branches: table('branches'),
    checkpoints: table('checkpoints'),
    contextLanes: table('context_lanes'),
    searchWords: table('search_words'),
    searchState: table('search_state'),
    liveReplies: table('live_replies'),
    liveChunks: table('live_chunks'),
    liveRevisions: table('live_revisions'),
    changeChannel: `ctxgraph_${channelHash(`${schema}.${tablePrefix}`)}`,
    local: (suffix) => quote(`${tablePrefix}${suffix}`),
    searchConfig: `'${searchLanguage}'::regconfig`,
  };
}
