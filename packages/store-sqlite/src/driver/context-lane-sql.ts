import {
  ContextConflictError,
  type ContextLaneRecord,
  type JsonValue,
} from '@ctxgraph/fragments-core';
import type { PreparedSaveContext } from '@ctxgraph/fragments-core/store-kit';
import type { SqliteConnection } from './connection';
import { requireChat } from './lookups';

interface LaneRow {
  fragments: string | null;
  revision: number | null;
  updated_at: number | null;
}

/**
 * The chat's context lane: revision 0 and no fragments while none was saved. One statement, so
 * the chat and its lane come from one snapshot.
 */
export function getContext(db: SqliteConnection, chatId: string): ContextLaneRecord {
  return db.run('getContext(chatId)', () => {
    const row = db
      .statement(
        `SELECT lane.fragments AS fragments, lane.revision AS revision, lane.updated_at AS updated_at
           FROM ${db.tables.chats} AS chat LEFT JOIN ${db.tables.contextLanes} AS lane ON lane.chat_id = chat.id
          WHERE chat.id = ?`,
      )
      .get(chatId) as LaneRow | undefined;
    if (row === undefined) requireChat(db, chatId);
    return laneRecord(chatId, row as LaneRow);
  });
}

/**
 * Replaces the lane in one `BEGIN IMMEDIATE` transaction: the revision is read and written under
 * the write lock, so of saves expecting the same revision (in any process) exactly one wins and
 * the others get `ContextConflictError`. Moves the chat's `updated_at`, never its `revision` or
 * `rewritten_at`.
 */
export function saveContext(db: SqliteConnection, input: PreparedSaveContext): ContextLaneRecord {
  const { chatId, fragmentsJson, expectedRevision } = input;
  const t = db.tables;
  return db.run('saveContext(input)', () =>
    db.write(() => {
      const chat = requireChat(db, chatId);
      const lane = db
        .statement(`SELECT revision, updated_at FROM ${t.contextLanes} WHERE chat_id = ?`)
        .get(chatId) as { revision: number; updated_at: number } | undefined;
      const currentRevision = lane?.revision ?? 0;
      if (expectedRevision !== undefined && expectedRevision !== currentRevision) {
        throw new ContextConflictError({ chatId, expectedRevision, currentRevision });
      }
      const now = Math.max(Date.now(), chat.updated_at, lane?.updated_at ?? 0);
      db.statement(`UPDATE ${t.chats} SET updated_at = ? WHERE id = ?`).run(now, chatId);
      db.statement(
        `INSERT INTO ${t.contextLanes} (chat_id, fragments, revision, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (chat_id) DO UPDATE SET
           fragments = excluded.fragments, revision = excluded.revision, updated_at = excluded.updated_at`,
      ).run(chatId, fragmentsJson, currentRevision + 1, now);
      return laneRecord(chatId, {
        fragments: fragmentsJson,
        revision: currentRevision + 1,
        updated_at: now,
      });
    }),
  );
}

function laneRecord(chatId: string, row: LaneRow): ContextLaneRecord {
  if (row.fragments === null) return { chatId, fragments: [], revision: 0, updatedAt: null };
  return {
    chatId,
    fragments: JSON.parse(row.fragments) as JsonValue[],
    revision: row.revision as number,
    updatedAt: row.updated_at as number,
  };
}
