import {
  type AppendResult,
  HeadConflictError,
  MessageIdConflictError,
  type MessageNodeRecord,
} from '@ctxgraph/fragments-core';
import { assignVersionIds, type PreparedCommitMessage } from '@ctxgraph/fragments-core/store-kit';
import type { TableNames } from '../schema/table-names';
import type { SqliteConnection } from './connection';
import { headState } from './lookups';
import { type MessageRow, writtenNode } from './rows';
import { inlineIndex } from './search-index';

/** What {@link writeMessages} writes: a `commit` (with `expectedHeadId`) or an `append` (without). */
export interface MessageWrite {
  readonly chatId: string;
  readonly branch: string;
  readonly messages: readonly PreparedCommitMessage[];
  /** The head the caller expects, or undefined to attach at the head found (`append`). */
  readonly expectedHeadId: string | null | undefined;
}

/**
 * The body of `commit` and `append`, to run inside the write transaction: inserts the new nodes,
 * replaces the content of ids the branch already holds (keeping their place), moves the head and
 * bumps the chat's revision. A throw after the first insert rolls the whole transaction back.
 * `HeadConflictError` when `expectedHeadId` is given and is not the head, `MessageIdConflictError`
 * when an id exists in the chat but not on the branch. A new version (`newVersion`) gets its node
 * id here, under the write lock every writer of the file takes, so no other writer, in this
 * process or another, can take it before the insert.
 */
export function writeMessages(db: SqliteConnection, input: MessageWrite): AppendResult {
  const { chatId, branch, expectedHeadId } = input;
  const state = headState(db, chatId, branch);
  if (expectedHeadId !== undefined && state.head !== expectedHeadId) {
    throw new HeadConflictError({ chatId, branch, expectedHeadId, currentHeadId: state.head });
  }
  const messages = asksForVersion(input.messages)
    ? assignVersionIds(input.messages, {
        newestNodeOf: (messageId) =>
          (db
            .prepared(newestNodeSql)
            .pluck()
            .get(chatId, messageId, chatId, messageId, messageId) as string | undefined) ?? null,
        hasNode: (nodeId) => db.prepared(hasNodeSql).get(chatId, nodeId) !== undefined,
      })
    : input.messages;
  const now = Date.now();
  // A plain insert for the usual case (an id new to the chat: nothing to return, the row is what
  // was passed); only when the id is taken does a second statement replace the content in place
  // and return what it kept (parent, sequence, creation time).
  const insert = db.prepared(insertSql);
  let head = state.head;
  let nextSequence = (state.max_sequence ?? 0) + 1;
  // Replaced ids and the lowest sequence among them, for the on-branch check below.
  const replacedIds: string[] = [];
  let oldestReplaced = Number.MAX_SAFE_INTEGER;
  const nodes: MessageNodeRecord[] = [];
  // The search index kept with the write, for a searched chat whose index is current (or a new
  // chat of a user who searched here): see `inlineIndex`. Undefined for a chat nobody searched.
  const index = inlineIndex(db, chatId, state);
  for (const message of messages) {
    const result = insert.run(
      chatId,
      message.id,
      head,
      nextSequence,
      message.role,
      message.json,
      message.engineRecordJson,
      now,
      now,
    );
    if (result.changes > 0) {
      index?.add(result.lastInsertRowid, nextSequence, message.message, false);
      nodes.push(
        writtenNode(
          chatId,
          message.id,
          head,
          nextSequence,
          message.json,
          message.engineRecordJson,
          now,
          now,
        ),
      );
      head = message.id;
      nextSequence += 1;
      continue;
    }
    const kept = db
      .prepared(replaceSql)
      .get(
        message.role,
        message.json,
        message.engineRecordJson,
        now,
        state.version + 1,
        chatId,
        message.id,
      ) as Pick<MessageRow, 'parent_id' | 'sequence' | 'created_at' | 'engine_record'> & {
      rowid: number | bigint;
    };
    replacedIds.push(message.id);
    if (kept.sequence < oldestReplaced) oldestReplaced = kept.sequence;
    index?.add(kept.rowid, kept.sequence, message.message, true);
    nodes.push(
      writtenNode(
        chatId,
        message.id,
        kept.parent_id,
        kept.sequence,
        message.json,
        kept.engine_record,
        kept.created_at,
        now,
      ),
    );
  }
  // Checked after the upserts, so a batch of new ids (the usual save) costs no extra statement;
  // a refusal throws, and the transaction rolls every row of the batch back.
  if (replacedIds.length > 0)
    assertOnBranch(db, chatId, branch, state.head, replacedIds, oldestReplaced);
  if (head !== state.head) db.prepared(moveHeadSql).run(head, now, chatId, branch);
  // The version and rewritten_at were read under this write's lock: the new ones follow from
  // them, so the update returns nothing (a RETURNING cost a turn about 4 µs of 60, bare SQL).
  const replaced = replacedIds.length > 0;
  db.prepared(bumpChatSql).run(replaced ? 1 : 0, now, chatId);
  const after = {
    version: state.version + 1,
    rewritten_at: replaced ? state.version + 1 : state.rewritten_at,
  };
  if (index !== undefined) index.finish(after.version);
  else if (state.indexed_version !== null) {
    // Left behind: this store's next search of the chat goes straight to its catch-up.
    db.indexHints.marksFound(chatId, true);
    db.indexHints.wrote(chatId);
  }
  return {
    headMessageId: head,
    previousHeadId: state.head,
    revision: after.version,
    rewrittenAt: after.rewritten_at,
    nodes,
  };
}

/** True when an entry asks for a new version (then the kit allocates node ids; usually none). */
function asksForVersion(messages: readonly PreparedCommitMessage[]): boolean {
  for (let index = 0; index < messages.length; index += 1)
    if ((messages[index] as PreparedCommitMessage).newVersion) return true;
  return false;
}

// The statements of a write, each built and prepared once per store (`db.prepared`).

// The newest node of a message: one probe of the `message versions` index (its expression).
// The newest node holding a message id, through the two ways `findMessageNodes` finds one (its
// versions through the versions-only index, whose condition the first WHERE spells; the node under
// the message's own id by primary key), never a scan of the chat.
export function newestNodeSql(t: TableNames): string {
  return `SELECT id FROM (
      SELECT id, sequence FROM (
        SELECT id, sequence FROM ${t.messages}
         WHERE chat_id = ? AND json_extract(payload, '$.id') = ? AND json_extract(payload, '$.id') <> id
         ORDER BY sequence DESC LIMIT 1
      )
      UNION ALL
      SELECT id, sequence FROM ${t.messages} WHERE chat_id = ? AND id = ? AND json_extract(payload, '$.id') = ?
    ) ORDER BY sequence DESC LIMIT 1`;
}

function hasNodeSql(t: TableNames): string {
  return `SELECT 1 FROM ${t.messages} WHERE chat_id = ? AND id = ?`;
}

function insertSql(t: TableNames): string {
  return `INSERT INTO ${t.messages} (chat_id, id, parent_id, sequence, role, payload, engine_record, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (chat_id, id) DO NOTHING`;
}

// `rewritten_at` is the revision this write gives the chat: the search index re-reads the node
// when it next catches up (see `search-index.ts`), unless the write indexed it itself.
function replaceSql(t: TableNames): string {
  return `UPDATE ${t.messages} SET role = ?, payload = ?, engine_record = coalesce(?, engine_record), updated_at = ?, rewritten_at = ? WHERE chat_id = ? AND id = ?
         RETURNING rowid, parent_id, sequence, created_at, engine_record`;
}

function moveHeadSql(t: TableNames): string {
  return `UPDATE ${t.branches} SET head_message_id = ?, updated_at = MAX(updated_at, ?) WHERE chat_id = ? AND name = ?`;
}

// The right-hand sides see the row as it was, so `version + 1` is the new version (the write
// computes it from the revision it read under the same lock).
function bumpChatSql(t: TableNames): string {
  return `UPDATE ${t.chats}
          SET version = version + 1, rewritten_at = CASE WHEN ? THEN version + 1 ELSE rewritten_at END,
              updated_at = MAX(updated_at, ?)
        WHERE id = ?`;
}

/**
 * Throws `MessageIdConflictError` for the first of `ids` (existing nodes the batch replaced)
 * that is not `head` or one of its ancestors. A parent always has a lower sequence than its
 * child, so the walk from the head stops below the oldest replaced node: it reads only the part
 * of the chain that could hold them.
 */
function assertOnBranch(
  db: SqliteConnection,
  chatId: string,
  branch: string,
  head: string | null,
  ids: readonly string[],
  oldest: number,
): void {
  const m = db.tables.messages;
  const found = new Set(
    db
      .statement(
        `WITH RECURSIVE walk (id, parent_id) AS (
           SELECT id, parent_id FROM ${m} WHERE chat_id = @chatId AND id = @head AND sequence >= @oldest
           UNION ALL
           SELECT node.id, node.parent_id
             FROM walk JOIN ${m} AS node ON node.chat_id = @chatId AND node.id = walk.parent_id
            WHERE node.sequence >= @oldest
         )
         SELECT id FROM walk WHERE id IN (SELECT value FROM json_each(@ids))`,
      )
      .pluck()
      .all({ chatId, head, oldest, ids: JSON.stringify(ids) }) as string[],
  );
  const offBranch = ids.find((id) => !found.has(id));
  if (offBranch !== undefined)
    throw new MessageIdConflictError({ chatId, branch, messageId: offBranch });
}
