import { type JsonObject, OwnershipError } from '@ctxgraph/fragments-core';
import { type ContextStoreDriver, mergeMetadata } from '@ctxgraph/fragments-core/store-kit';
import type { LiveReplyOperations } from './live-replies';
import { type Lookups, MAIN_BRANCH } from './lookups';
import {
  assertLaneRevision,
  type BranchRow,
  branchRecord,
  type ChatRow,
  type CheckpointRow,
  chatRecord,
  checkpointRecord,
  type LaneRow,
  laneRecord,
  missingRow,
  type NodeRow,
  nodeRecord,
} from './rows';
import { forgetSearchIndex } from './search';

/** The chat-level operations of the driver. */
export type ChatOperations = Required<
  Pick<
    ContextStoreDriver,
    | 'openChat'
    | 'getChat'
    | 'updateChat'
    | 'listChats'
    | 'deleteChat'
    | 'getGraph'
    | 'getContext'
    | 'saveContext'
  >
>;

/**
 * Chats: open (create or load), read, update, list (the chats of this object), delete, the
 * whole graph of one, and its context lane (a row of its own, deleted with the chat). Deleting a
 * chat deletes its live replies too (`forgetLive`, in the same write).
 */
export function chatOperations(
  db: Lookups,
  forgetLive: LiveReplyOperations['forget'],
): ChatOperations {
  const { storage, sql, rows, findChat, requireChat, findBranch, findLane, touchChat } = db;
  return {
    openChat(input) {
      return storage.transactionSync(() => {
        const existing = findChat(input.chatId);
        if (existing !== undefined) {
          if (existing.user_id !== input.userId)
            throw new OwnershipError(input.chatId, input.userId);
          let chat = existing;
          if (input.metadata !== undefined) {
            const merged = JSON.stringify(
              mergeMetadata(JSON.parse(existing.metadata) as JsonObject, input.metadata),
            );
            const now = Math.max(Date.now(), existing.updated_at);
            sql.exec(
              'UPDATE ctxgraph_chats SET metadata = ?, updated_at = ? WHERE id = ?',
              merged,
              now,
              existing.id,
            );
            chat = { ...existing, metadata: merged, updated_at: now };
          }
          const branch = findBranch(chat.id, chat.active_branch);
          if (branch === undefined)
            throw missingRow('openChat(input)', `active branch of chat "${chat.id}"`);
          return { chat: chatRecord(chat), branch: branchRecord(branch), created: false };
        }
        const now = Date.now();
        const chat: ChatRow = {
          id: input.chatId,
          user_id: input.userId,
          title: input.title,
          metadata: input.metadataJson,
          active_branch: MAIN_BRANCH,
          revision: 0,
          rewritten_at: 0,
          next_sequence: 1,
          created_at: now,
          updated_at: now,
        };
        sql.exec(
          'INSERT INTO ctxgraph_chats (id, user_id, title, metadata, active_branch, revision, rewritten_at, next_sequence, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 0, 0, 1, ?, ?)',
          chat.id,
          chat.user_id,
          chat.title,
          chat.metadata,
          chat.active_branch,
          now,
          now,
        );
        const main: BranchRow = {
          chat_id: chat.id,
          name: MAIN_BRANCH,
          head_message_id: null,
          created_at: now,
          updated_at: now,
        };
        sql.exec(
          'INSERT INTO ctxgraph_branches (chat_id, name, head_message_id, created_at, updated_at) VALUES (?, ?, NULL, ?, ?)',
          chat.id,
          MAIN_BRANCH,
          now,
          now,
        );
        return { chat: chatRecord(chat), branch: branchRecord(main), created: true };
      });
    },

    getChat(chatId) {
      const chat = findChat(chatId);
      return chat === undefined ? null : chatRecord(chat);
    },

    updateChat(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        const metadata =
          input.metadata === undefined
            ? chat.metadata
            : JSON.stringify(
                mergeMetadata(JSON.parse(chat.metadata) as JsonObject, input.metadata),
              );
        const title = input.title === undefined ? chat.title : input.title;
        const now = Math.max(Date.now(), chat.updated_at);
        sql.exec(
          'UPDATE ctxgraph_chats SET title = ?, metadata = ?, updated_at = ? WHERE id = ?',
          title,
          metadata,
          now,
          chat.id,
        );
        return chatRecord({ ...chat, title, metadata, updated_at: now });
      });
    },

    listChats(query) {
      const after = query.after;
      const found =
        after === null
          ? rows<ChatRow>(
              'SELECT * FROM ctxgraph_chats WHERE user_id = ? ORDER BY updated_at DESC, id ASC LIMIT ?',
              query.userId,
              query.limit + 1,
            )
          : rows<ChatRow>(
              `SELECT * FROM ctxgraph_chats WHERE user_id = ?1
                 AND (updated_at < ?2 OR (updated_at = ?2 AND id > ?3))
               ORDER BY updated_at DESC, id ASC LIMIT ?4`,
              query.userId,
              after.updatedAt,
              after.id,
              query.limit + 1,
            );
      return found.map(chatRecord);
    },

    deleteChat(chatId) {
      return storage.transactionSync(() => {
        if (findChat(chatId) === undefined) return false;
        // The search index first: its rows are keyed by the nodes' rowids.
        forgetSearchIndex(sql, chatId);
        for (const table of [
          'ctxgraph_context_lanes',
          'ctxgraph_checkpoints',
          'ctxgraph_branches',
          'ctxgraph_nodes',
        ] as const)
          sql.exec(`DELETE FROM ${table} WHERE chat_id = ?`, chatId);
        forgetLive(chatId);
        sql.exec('DELETE FROM ctxgraph_chats WHERE id = ?', chatId);
        return true;
      });
    },

    getGraph(chatId) {
      const chat = requireChat(chatId);
      return {
        chat: chatRecord(chat),
        nodes: rows<NodeRow>(
          'SELECT * FROM ctxgraph_nodes WHERE chat_id = ? ORDER BY sequence',
          chatId,
        ).map(nodeRecord),
        branches: rows<BranchRow>(
          'SELECT * FROM ctxgraph_branches WHERE chat_id = ? ORDER BY rowid',
          chatId,
        ).map(branchRecord),
        checkpoints: rows<CheckpointRow>(
          'SELECT * FROM ctxgraph_checkpoints WHERE chat_id = ? ORDER BY rowid',
          chatId,
        ).map(checkpointRecord),
      };
    },

    getContext(chatId) {
      const chat = requireChat(chatId);
      return laneRecord(chat.id, findLane(chat.id));
    },

    // Saving does not touch the chat's `revision` (message commits only); it moves `updatedAt`.
    saveContext(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        const lane = findLane(chat.id);
        assertLaneRevision(chat.id, lane, input.expectedRevision);
        const now = Math.max(Date.now(), chat.updated_at, lane?.updated_at ?? 0);
        const saved: LaneRow = {
          chat_id: chat.id,
          fragments: input.fragmentsJson,
          revision: (lane?.revision ?? 0) + 1,
          updated_at: now,
        };
        sql.exec(
          `INSERT INTO ctxgraph_context_lanes (chat_id, fragments, revision, updated_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (chat_id) DO UPDATE SET fragments = excluded.fragments, revision = excluded.revision, updated_at = excluded.updated_at`,
          saved.chat_id,
          saved.fragments,
          saved.revision,
          saved.updated_at,
        );
        touchChat(chat, now);
        return laneRecord(chat.id, saved);
      });
    },
  };
}
