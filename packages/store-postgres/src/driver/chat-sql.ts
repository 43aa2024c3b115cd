import {
  BranchNotFoundError,
  ChatNotFoundError,
  type ChatRecord,
  type GetHeadInput,
  type HeadState,
  type JsonObject,
  type OpenChatResult,
  OwnershipError,
  StoreError,
} from '@ctxgraph/fragments-core';
import {
  type ChatListQuery,
  mergeMetadata,
  type PreparedOpenChat,
  type PreparedUpdateChat,
} from '@ctxgraph/fragments-core/store-kit';
import type { PostgresConnection } from './connection';
import {
  BRANCH_COLUMNS,
  branchFrom,
  CHAT_COLUMNS,
  CHAT_WIDTH,
  chatFrom,
  integer,
  MAX_ATTEMPTS,
  optionalText,
  type Row,
  text,
} from './rows';

/** Creates the chat with an empty active `main` branch, or loads it (ownership checked first). */
export function openChat(db: PostgresConnection, input: PreparedOpenChat): Promise<OpenChatResult> {
  const { chatId, userId } = input;
  return db.run(async (sql) => {
    const names = db.names;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      // The branch is joined only for the owner, so another user's call reads nothing of it.
      const existing = await db.query(
        sql,
        `SELECT ${CHAT_COLUMNS}, ${BRANCH_COLUMNS} FROM ${names.chats} c
         LEFT JOIN ${names.branches} b ON b.chat_id = c.chat_id AND b.name = c.active_branch AND c.user_id = $2
         WHERE c.chat_id = $1`,
        [chatId, userId],
      );
      const row = existing[0];
      if (row !== undefined) {
        if (text(row[1]) !== userId) throw new OwnershipError(chatId, userId);
        let chat = chatFrom(row);
        if (input.metadata !== undefined)
          chat = await mergeChat(db, chatId, undefined, input.metadata);
        if (row[CHAT_WIDTH] === null) {
          throw new StoreError(
            `openChat: chat "${chatId}" has no row for its active branch "${chat.activeBranch}"; the data was changed outside this store.`,
          );
        }
        return { chat, branch: branchFrom(row, CHAT_WIDTH), created: false };
      }
      const now = Date.now();
      // ON CONFLICT DO NOTHING lets concurrent first opens race safely: the losers insert
      // nothing, and the next loop's read (a new statement, so a new snapshot) finds the winner's chat.
      const inserted = await db.query(
        sql,
        `WITH c AS (
           INSERT INTO ${names.chats} (chat_id, user_id, title, metadata, active_branch, created_at, updated_at)
           VALUES ($1, $2, $3, $4::text::json, 'main', $5, $5)
           ON CONFLICT (chat_id) DO NOTHING
           RETURNING *
         ), b AS (
           INSERT INTO ${names.branches} (chat_id, name, head_message_id, created_at, updated_at)
           SELECT chat_id, 'main', NULL, $5, $5 FROM c
           RETURNING *
         )
         SELECT ${CHAT_COLUMNS}, ${BRANCH_COLUMNS} FROM c CROSS JOIN b`,
        [chatId, userId, input.title, input.metadataJson, now],
      );
      const created = inserted[0];
      if (created !== undefined)
        return {
          chat: chatFrom(created),
          branch: branchFrom(created, CHAT_WIDTH),
          created: true,
        };
    }
    throw new StoreError(
      `openChat: chat "${chatId}" kept appearing and disappearing (created and deleted by other writers); try again.`,
    );
  });
}

/** The chat, or null. */
export function getChat(db: PostgresConnection, chatId: string): Promise<ChatRecord | null> {
  return db.run(async (sql) => {
    const rows = await db.query(
      sql,
      `SELECT ${CHAT_COLUMNS} FROM ${db.names.chats} c WHERE c.chat_id = $1`,
      [chatId],
    );
    return rows[0] === undefined ? null : chatFrom(rows[0]);
  });
}

/** Sets the title and shallow-merges metadata; returns the chat as stored. */
export function updateChat(db: PostgresConnection, input: PreparedUpdateChat): Promise<ChatRecord> {
  return db.run(() => mergeChat(db, input.chatId, input.title, input.metadata));
}

/** Up to `limit + 1` of a user's chats after the cursor, most recently updated first (ties by id, in code point order). */
export function listChats(db: PostgresConnection, query: ChatListQuery): Promise<ChatRecord[]> {
  return db.run(async (sql) => {
    const rows = await db.query(
      sql,
      `SELECT ${CHAT_COLUMNS} FROM ${db.names.chats} c
       WHERE c.user_id = $1
         AND ($2::bigint IS NULL OR c.updated_at < $2::bigint OR (c.updated_at = $2::bigint AND c.chat_id COLLATE "C" > $3::text COLLATE "C"))
       ORDER BY c.updated_at DESC, c.chat_id COLLATE "C"
       LIMIT $4`,
      [query.userId, query.after?.updatedAt ?? null, query.after?.id ?? null, query.limit + 1],
    );
    return rows.map((row) => chatFrom(row));
  });
}

/** Deletes the chat with its nodes, branches and checkpoints. False when there was no such chat. */
export function deleteChat(db: PostgresConnection, chatId: string): Promise<boolean> {
  return db.run(() =>
    db.transaction(async (sql) => {
      // Branch rows first: commit locks the branch row before the chat row, and taking them in
      // the same order here means a delete racing a commit never deadlocks.
      await db.query(sql, `DELETE FROM ${db.names.branches} WHERE chat_id = $1`, [chatId]);
      const rows = await db.query(
        sql,
        `DELETE FROM ${db.names.chats} WHERE chat_id = $1 RETURNING 1`,
        [chatId],
      );
      return rows.length > 0;
    }),
  );
}

/** The chat's revision and rewrittenAt with one branch's head, in one query. */
export function getHead(db: PostgresConnection, input: GetHeadInput): Promise<HeadState> {
  return db.run(async (sql) => {
    const rows = await db.query(
      sql,
      `SELECT c.version, c.rewritten_at, b.name, b.head_message_id FROM ${db.names.chats} c
       LEFT JOIN ${db.names.branches} b ON b.chat_id = c.chat_id AND b.name = $2
       WHERE c.chat_id = $1`,
      [input.chatId, input.branch],
    );
    const row = rows[0];
    if (row === undefined) throw new ChatNotFoundError(input.chatId);
    if (row[2] === null) throw new BranchNotFoundError(input.chatId, input.branch);
    return {
      revision: integer(row[0]),
      rewrittenAt: integer(row[1]),
      headMessageId: optionalText(row[3]),
    };
  });
}

/** Sets the title when given and merges the metadata when given, under the chat row lock. */
function mergeChat(
  db: PostgresConnection,
  chatId: string,
  title: string | null | undefined,
  patch: JsonObject | undefined,
): Promise<ChatRecord> {
  return db.transaction(async (sql) => {
    const names = db.names;
    const current = await db.query(
      sql,
      `SELECT c.metadata::text FROM ${names.chats} c WHERE c.chat_id = $1 FOR NO KEY UPDATE`,
      [chatId],
    );
    if (current[0] === undefined) throw new ChatNotFoundError(chatId);
    // Merged here rather than with jsonb `||` so metadata keeps its key order (json, not jsonb).
    const metadata = mergeMetadata(JSON.parse(text(current[0][0])) as JsonObject, patch);
    const rows = await db.query(
      sql,
      `UPDATE ${names.chats} c SET
         title = CASE WHEN $2 THEN $3 ELSE c.title END,
         metadata = $4::text::json,
         updated_at = greatest(c.updated_at, $5::bigint)
       WHERE c.chat_id = $1
       RETURNING ${CHAT_COLUMNS}`,
      [chatId, title !== undefined, title ?? null, JSON.stringify(metadata), Date.now()],
    );
    return chatFrom(rows[0] as Row);
  });
}
