import {
  type BranchRecord,
  type ChatRecord,
  type GetHeadInput,
  type HeadState,
  type JsonObject,
  type OpenChatResult,
  OwnershipError,
  ValidationError,
} from '@ctxgraph/fragments-core';
import {
  type ChatListQuery,
  mergeMetadata,
  type PreparedOpenChat,
  type PreparedUpdateChat,
} from '@ctxgraph/fragments-core/store-kit';
import type { TableNames } from '../schema/table-names';
import type { SqliteConnection } from './connection';
import { forgetLiveReplies } from './live-replies';
import { activeBranch, chatRow, headState, missingActiveBranch, requireChat } from './lookups';
import { type BranchRow, branchRecord, type ChatRow, chatRecord, MAIN_BRANCH } from './rows';
import { forgetNodes } from './search-index';

/** Creates the chat with an empty active `main` branch, or loads it (ownership checked first). */
export function openChat(db: SqliteConnection, input: PreparedOpenChat): OpenChatResult {
  const { chatId, userId, metadata } = input;
  return db.run('openChat(input)', () => {
    // Loading an existing chat without metadata is the common case: one statement (one
    // snapshot: the chat and its active branch together), no transaction, no write lock.
    if (metadata === undefined) {
      const loaded = loadChat(db, chatId);
      if (loaded !== undefined) {
        if (loaded.user_id !== userId) throw new OwnershipError(chatId, userId);
        return { chat: chatRecord(loaded), branch: loadedBranch(db, loaded), created: false };
      }
    }
    return db.write(() => {
      const existing = chatRow(db, chatId);
      const now = Date.now();
      if (existing !== undefined) {
        if (existing.user_id !== userId) throw new OwnershipError(chatId, userId);
        let chat = existing;
        if (metadata !== undefined) {
          const merged = mergeMetadata(JSON.parse(existing.metadata) as JsonObject, metadata);
          chat = db
            .statement(
              `UPDATE ${db.tables.chats} SET metadata = ?, updated_at = MAX(updated_at, ?) WHERE id = ? RETURNING *`,
            )
            .get(JSON.stringify(merged), now, chatId) as ChatRow;
        }
        return { chat: chatRecord(chat), branch: activeBranch(db, chat), created: false };
      }
      const chat = db
        .statement(
          `INSERT INTO ${db.tables.chats} (id, user_id, title, metadata, active_branch, version, rewritten_at, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, 0, 0, ?, ?) RETURNING *`,
        )
        .get(chatId, userId, input.title, input.metadataJson, MAIN_BRANCH, now, now) as ChatRow;
      const branch = db
        .statement(
          `INSERT INTO ${db.tables.branches} (chat_id, name, head_message_id, created_at, updated_at)
           VALUES (?, ?, NULL, ?, ?) RETURNING *`,
        )
        .get(chatId, MAIN_BRANCH, now, now) as BranchRow;
      return { chat: chatRecord(chat), branch: branchRecord(branch), created: true };
    });
  });
}

/** A chat row with its active branch's row beside it (null columns when that branch is missing). */
interface LoadedChatRow extends ChatRow {
  branch_name: string | null;
  branch_head: string | null;
  branch_created_at: number | null;
  branch_updated_at: number | null;
}

/** The chat and its active branch in one statement, or undefined when there is no chat. */
function loadChat(db: SqliteConnection, chatId: string): LoadedChatRow | undefined {
  return db.prepared(loadChatSql).get(chatId) as LoadedChatRow | undefined;
}

function loadChatSql(t: TableNames): string {
  return `SELECT chat.*, branch.name AS branch_name, branch.head_message_id AS branch_head,
            branch.created_at AS branch_created_at, branch.updated_at AS branch_updated_at
       FROM ${t.chats} AS chat
       LEFT JOIN ${t.branches} AS branch ON branch.chat_id = chat.id AND branch.name = chat.active_branch
      WHERE chat.id = ?`;
}

/** The active branch of a loaded chat; a `StoreError` when the chat names one that does not exist. */
function loadedBranch(db: SqliteConnection, row: LoadedChatRow): BranchRecord {
  if (row.branch_name === null) throw missingActiveBranch(db, row);
  return {
    chatId: row.id,
    name: row.branch_name,
    headMessageId: row.branch_head,
    createdAt: row.branch_created_at as number,
    updatedAt: row.branch_updated_at as number,
  };
}

/** The chat, or null. */
export function getChat(db: SqliteConnection, chatId: string): ChatRecord | null {
  return db.run('getChat(chatId)', () => {
    const row = chatRow(db, chatId);
    return row === undefined ? null : chatRecord(row);
  });
}

/**
 * Sets the title when given and merges the metadata when given. The merged metadata is held to
 * the same size limit as the metadata given: a refusal writes nothing.
 */
export function updateChat(
  db: SqliteConnection,
  input: PreparedUpdateChat,
  maxJsonBytes: number,
): ChatRecord {
  const method = 'updateChat(input)';
  return db.run(method, () =>
    db.write(() => {
      const existing = requireChat(db, input.chatId);
      const title = input.title === undefined ? existing.title : input.title;
      const metadata = JSON.stringify(
        mergeMetadata(JSON.parse(existing.metadata) as JsonObject, input.metadata),
      );
      // UTF-8 takes at most 3 bytes per UTF-16 code unit: only long texts need counting.
      if (metadata.length * 3 > maxJsonBytes) {
        const bytes = Buffer.byteLength(metadata, 'utf8');
        if (bytes > maxJsonBytes) {
          const problem = `is ${bytes} bytes once merged, more than the store accepts (${maxJsonBytes})`;
          throw new ValidationError(`${method}: metadata ${problem}. Nothing was written.`, {
            issues: [{ path: 'metadata', message: problem }],
          });
        }
      }
      const row = db
        .statement(
          `UPDATE ${db.tables.chats} SET title = ?, metadata = ?, updated_at = MAX(updated_at, ?) WHERE id = ? RETURNING *`,
        )
        .get(title, metadata, Date.now(), input.chatId) as ChatRow;
      return chatRecord(row);
    }),
  );
}

/** Up to `query.limit + 1` of the user's chats after the cursor: the kit cuts the page. */
export function listChats(db: SqliteConnection, query: ChatListQuery): ChatRecord[] {
  return db.run('listChats(input)', () => {
    const chats = db.tables.chats;
    const rows = (
      query.after === null
        ? db
            .statement(
              `SELECT * FROM ${chats} WHERE user_id = ? ORDER BY updated_at DESC, id ASC LIMIT ?`,
            )
            .all(query.userId, query.limit + 1)
        : db
            .statement(
              // `updated_at <= ?` lets the index seek straight to the cursor; the OR then drops
              // the chats of the same millisecond that the previous page already listed.
              `SELECT * FROM ${chats} WHERE user_id = ? AND updated_at <= ? AND (updated_at < ? OR id > ?)
               ORDER BY updated_at DESC, id ASC LIMIT ?`,
            )
            .all(
              query.userId,
              query.after.updatedAt,
              query.after.updatedAt,
              query.after.id,
              query.limit + 1,
            )
    ) as ChatRow[];
    return rows.map(chatRecord);
  });
}

/** Deletes the chat and everything it owns; false when there was none. */
export function deleteChat(db: SqliteConnection, chatId: string): boolean {
  return db.run('deleteChat(chatId)', () =>
    db.write(() => {
      const t = db.tables;
      // The lane and pointers first, then nodes, then the chat, so foreign keys hold after each statement.
      db.statement(`DELETE FROM ${t.contextLanes} WHERE chat_id = ?`).run(chatId);
      forgetLiveReplies(db, chatId);
      db.statement(`DELETE FROM ${t.checkpoints} WHERE chat_id = ?`).run(chatId);
      db.statement(`DELETE FROM ${t.branches} WHERE chat_id = ?`).run(chatId);
      forgetNodes(db, chatId, '1', {});
      db.statement(`DELETE FROM ${t.searchState} WHERE chat_id = ?`).run(chatId);
      db.statement(`DELETE FROM ${t.messages} WHERE chat_id = ?`).run(chatId);
      return db.statement(`DELETE FROM ${t.chats} WHERE id = ?`).run(chatId).changes > 0;
    }),
  );
}

/** The chat's revision and `rewrittenAt`, and the branch's head. */
export function getHead(db: SqliteConnection, input: GetHeadInput): HeadState {
  return db.run('getHead(input)', () => {
    const state = headState(db, input.chatId, input.branch);
    return { revision: state.version, headMessageId: state.head, rewrittenAt: state.rewritten_at };
  });
}
