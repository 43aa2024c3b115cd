import {
  assertIdentifier,
  type ChatRecord,
  type JsonObject,
  type ListChatsInput,
  type Page,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { chatCursor, prepareListChats } from '@ctxgraph/fragments-core/store-kit';
import type { DurableObjectStorageLike, SqlValue } from '../driver/sql-storage';

// A user's chat list, kept in the user's own Durable Object (one per user, named by the user id)
// by the chat objects: each chat object sends its chat's record after each write
// (`ChatListPublisher`), and this object keeps the newest it was sent. The updates are
// idempotent and commute: a record replaces the kept one only when it is newer by
// (`updatedAt`, `revision`), and a removal leaves a mark that refuses any record of the chat not
// written after it, so a retried, duplicated or late update never moves the list back.

const NAME = 'DurableObjectChatList';

/** What a chat object sends its user's list. */
export type ChatListUpdate =
  /** The chat as it is now (after a write). */
  | { readonly type: 'chat'; readonly chat: ChatRecord }
  /** The chat was deleted; `at` is the chat object's clock when it found it gone. */
  | {
      readonly type: 'removed';
      readonly chatId: string;
      readonly userId: string;
      readonly at: number;
    };

interface ListRow {
  readonly id: string;
  readonly user_id: string;
  readonly title: string | null;
  readonly metadata: string;
  readonly active_branch: string;
  readonly revision: number;
  readonly rewritten_at: number;
  readonly created_at: number;
  readonly updated_at: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS ctxgraph_chat_list (
  id TEXT NOT NULL PRIMARY KEY,
  user_id TEXT NOT NULL,
  title TEXT,
  metadata TEXT NOT NULL,
  active_branch TEXT NOT NULL,
  revision INTEGER NOT NULL,
  rewritten_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS ctxgraph_chat_list_by_recency ON ctxgraph_chat_list (user_id, updated_at DESC, id);
CREATE TABLE IF NOT EXISTS ctxgraph_chat_list_removals (
  id TEXT NOT NULL PRIMARY KEY,
  removed_at INTEGER NOT NULL
) STRICT;
`;

/**
 * A user's chat list over a Durable Object's SQLite storage (the user's object, one per user):
 * what `ContextStore.listChats` answers on a single database, across the chat objects. Build it
 * in the user object's constructor under `ctx.blockConcurrencyWhile`; the chat objects keep it
 * current through a {@link ChatListPublisher}.
 *
 * @example
 * ```ts
 * export class UserObject extends DurableObject {
 *   #chats!: DurableObjectChatList;
 *   constructor(ctx: DurableObjectState, env: Env) {
 *     super(ctx, env);
 *     ctx.blockConcurrencyWhile(async () => {
 *       this.#chats = new DurableObjectChatList(ctx.storage);
 *     });
 *   }
 *   apply(update: ChatListUpdate): boolean {
 *     return this.#chats.apply(update);
 *   }
 * }
 * ```
 */
export class DurableObjectChatList {
  readonly #storage: DurableObjectStorageLike;

  /**
   * Opens the list over the object's storage and creates its tables (idempotent).
   * @param storage The user object's `ctx.storage` (a class under `new_sqlite_classes`).
   */
  constructor(storage: DurableObjectStorageLike) {
    if (
      typeof storage !== 'object' ||
      storage === null ||
      typeof storage.transactionSync !== 'function' ||
      typeof storage.sql?.exec !== 'function'
    )
      throw new ValidationError(
        `${NAME}: storage must be a SQLite-backed Durable Object's ctx.storage (declare the class under "new_sqlite_classes").`,
        { issues: [{ path: 'storage', message: 'expected a SQLite-backed DurableObjectStorage' }] },
      );
    this.#storage = storage;
    storage.transactionSync(() => storage.sql.exec(SCHEMA));
  }

  /**
   * Applies a chat object's update, in one write. Returns true when the list changed, false when
   * the update was not newer than what the list holds (a duplicate, a retry, or one that came
   * late): applying an update twice, or two updates in either order, leaves the same list.
   * Throws `ValidationError` for a malformed update, before anything is written.
   */
  apply(update: ChatListUpdate): boolean {
    const checked = checkUpdate(update);
    const { sql } = this.#storage;
    return this.#storage.transactionSync(() => {
      if (checked.type === 'removed') {
        const removal = removedAt(this.#storage, checked.chatId);
        if (removal !== undefined && removal >= checked.at) return false;
        const kept = sql
          .exec('SELECT updated_at FROM ctxgraph_chat_list WHERE id = ?', checked.chatId)
          .toArray()[0];
        // A chat written after the removal was seen is a new chat of the same id: it stays.
        if (kept !== undefined && Number(kept.updated_at) > checked.at) return false;
        sql.exec(
          `INSERT INTO ctxgraph_chat_list_removals (id, removed_at) VALUES (?, ?)
           ON CONFLICT (id) DO UPDATE SET removed_at = excluded.removed_at`,
          checked.chatId,
          checked.at,
        );
        sql.exec('DELETE FROM ctxgraph_chat_list WHERE id = ?', checked.chatId);
        return kept !== undefined;
      }
      const { chat } = checked;
      const removal = removedAt(this.#storage, chat.id);
      if (removal !== undefined && chat.updatedAt <= removal) return false;
      const kept = sql
        .exec('SELECT updated_at, revision FROM ctxgraph_chat_list WHERE id = ?', chat.id)
        .toArray()[0];
      if (
        kept !== undefined &&
        (Number(kept.updated_at) > chat.updatedAt ||
          (Number(kept.updated_at) === chat.updatedAt && Number(kept.revision) >= chat.revision))
      )
        return false;
      sql.exec(
        `INSERT INTO ctxgraph_chat_list
           (id, user_id, title, metadata, active_branch, revision, rewritten_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET user_id = excluded.user_id, title = excluded.title,
           metadata = excluded.metadata, active_branch = excluded.active_branch,
           revision = excluded.revision, rewritten_at = excluded.rewritten_at,
           created_at = excluded.created_at, updated_at = excluded.updated_at`,
        chat.id,
        chat.userId,
        chat.title,
        JSON.stringify(chat.metadata),
        chat.activeBranch,
        chat.revision,
        chat.rewrittenAt,
        chat.createdAt,
        chat.updatedAt,
      );
      return true;
    });
  }

  /**
   * The user's chats, most recently updated first (then by id), a page at a time: the input, the
   * order, the page and the cursor of `ContextStore.listChats`, checked by the same kit function
   * (`ValidationError` for a bad user id, limit or cursor).
   */
  list(input: ListChatsInput): Page<ChatRecord> {
    const query = prepareListChats(input);
    const bindings: SqlValue[] = [query.userId];
    let after = '';
    if (query.after !== null) {
      after = 'AND (updated_at < ? OR (updated_at = ? AND id > ?))';
      bindings.push(query.after.updatedAt, query.after.updatedAt, query.after.id);
    }
    const rows = this.#storage.sql
      .exec(
        `SELECT * FROM ctxgraph_chat_list WHERE user_id = ? ${after}
          ORDER BY updated_at DESC, id LIMIT ?`,
        ...bindings,
        query.limit + 1,
      )
      .toArray() as unknown as ListRow[];
    const items = rows.slice(0, query.limit).map(chatRecord);
    const last = items.at(-1);
    return {
      items,
      nextCursor: rows.length > query.limit && last !== undefined ? chatCursor(last) : null,
    };
  }

  /** The ids of the user's chats, most recently updated first (what a user-wide search fans out to). */
  chatIds(userId: string): string[] {
    assertIdentifier(`${NAME}.chatIds(userId)`, 'userId', userId);
    return this.#storage.sql
      .exec(
        'SELECT id FROM ctxgraph_chat_list WHERE user_id = ? ORDER BY updated_at DESC, id',
        userId,
      )
      .toArray()
      .map((row) => String(row.id));
  }
}

function removedAt(storage: DurableObjectStorageLike, chatId: string): number | undefined {
  const row = storage.sql
    .exec('SELECT removed_at FROM ctxgraph_chat_list_removals WHERE id = ?', chatId)
    .toArray()[0];
  return row === undefined ? undefined : Number(row.removed_at);
}

function chatRecord(row: ListRow): ChatRecord {
  return {
    id: row.id,
    userId: row.user_id,
    title: row.title,
    metadata: JSON.parse(row.metadata) as JsonObject,
    activeBranch: row.active_branch,
    revision: row.revision,
    rewrittenAt: row.rewritten_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function problem(path: string, message: string): ValidationError {
  return new ValidationError(`${NAME}.apply(update): ${path} ${message}.`, {
    issues: [{ path, message }],
  });
}

function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** The update, checked field by field into a fresh object (a chat object's data is still data). */
function checkUpdate(update: unknown): ChatListUpdate {
  const method = `${NAME}.apply(update)`;
  if (typeof update !== 'object' || update === null) throw problem('update', 'must be an object');
  const { type } = update as { type?: unknown };
  if (type === 'removed') {
    const { chatId, userId, at } = update as Record<string, unknown>;
    assertIdentifier(method, 'chatId', chatId);
    assertIdentifier(method, 'userId', userId);
    if (!isTime(at)) throw problem('at', 'must be milliseconds since the epoch');
    return { type, chatId: chatId as string, userId: userId as string, at };
  }
  if (type !== 'chat')
    throw problem('type', `must be "chat" or "removed", received ${String(type)}`);
  const chat = (update as { chat?: unknown }).chat;
  if (typeof chat !== 'object' || chat === null) throw problem('chat', 'must be a chat record');
  const record = chat as Record<string, unknown>;
  assertIdentifier(method, 'chat.id', record.id);
  assertIdentifier(method, 'chat.userId', record.userId);
  assertIdentifier(method, 'chat.activeBranch', record.activeBranch);
  if (record.title !== null && typeof record.title !== 'string')
    throw problem('chat.title', 'must be a string or null');
  if (
    typeof record.metadata !== 'object' ||
    record.metadata === null ||
    Array.isArray(record.metadata)
  )
    throw problem('chat.metadata', 'must be a JSON object');
  for (const field of ['revision', 'rewrittenAt', 'createdAt', 'updatedAt'] as const)
    if (!isTime(record[field])) throw problem(`chat.${field}`, 'must be a non-negative integer');
  return {
    type,
    chat: {
      id: record.id as string,
      userId: record.userId as string,
      title: record.title as string | null,
      metadata: record.metadata as JsonObject,
      activeBranch: record.activeBranch as string,
      revision: record.revision as number,
      rewrittenAt: record.rewrittenAt as number,
      createdAt: record.createdAt as number,
      updatedAt: record.updatedAt as number,
    },
  };
}
