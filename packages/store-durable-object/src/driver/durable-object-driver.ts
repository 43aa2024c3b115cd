import {
  BranchExistsError,
  BranchNotFoundError,
  ChatNotFoundError,
  CheckpointExistsError,
  type CommitResult,
  HeadConflictError,
  type JsonObject,
  MessageIdConflictError,
  type MessageNodeRecord,
  MessageNotFoundError,
  OwnershipError,
} from '@ctxgraph/fragments-core';
import {
  assignVersionIds,
  type ContextStoreDriver,
  forkBranchName,
  mergeMetadata,
  type PreparedCommitMessage,
} from '@ctxgraph/fragments-core/store-kit';
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
  rowsAs,
} from './rows';
import type { DurableObjectStorageLike, SqlValue } from './sql-storage';

/** The name of the store in error messages and `toJSON()`. */
export const STORE_NAME = 'DurableObjectContextStore';

/** The branch every chat starts with. */
const MAIN_BRANCH = 'main';

/**
 * The largest JSON text the store accepts, in UTF-8 bytes: Durable Object SQLite refuses a
 * string or a row over 2 MB (2,000,000 bytes), and this leaves room for the rest of the row.
 * A node row holds a message and its engine record: the two together must stay under the
 * platform's limit, or the platform refuses the write (a `StoreError`, nothing written).
 */
export const DEFAULT_MAX_JSON_BYTES = 1_900_000;

/**
 * The driver over one Durable Object's SQLite storage. Every method runs synchronously, start to
 * end, on the object's single thread: no other call of the object runs in between, so each write
 * reads the head and moves it with nothing interleaved. Writes still run in `transactionSync`,
 * so a write that throws halfway leaves nothing behind.
 */
export function durableObjectDriver(storage: DurableObjectStorageLike): ContextStoreDriver {
  const sql = storage.sql;

  function rows<Row>(query: string, ...bindings: SqlValue[]): Row[] {
    return rowsAs<Row>(sql.exec(query, ...bindings).toArray());
  }

  function findChat(chatId: string): ChatRow | undefined {
    return rows<ChatRow>('SELECT * FROM ctxgraph_chats WHERE id = ?', chatId)[0];
  }

  function requireChat(chatId: string): ChatRow {
    const chat = findChat(chatId);
    if (chat === undefined) throw new ChatNotFoundError(chatId);
    return chat;
  }

  function findLane(chatId: string): LaneRow | undefined {
    return rows<LaneRow>('SELECT * FROM ctxgraph_context_lanes WHERE chat_id = ?', chatId)[0];
  }

  function findBranch(chatId: string, name: string): BranchRow | undefined {
    return rows<BranchRow>(
      'SELECT * FROM ctxgraph_branches WHERE chat_id = ? AND name = ?',
      chatId,
      name,
    )[0];
  }

  function requireBranch(chatId: string, name: string): BranchRow {
    const branch = findBranch(chatId, name);
    if (branch === undefined) throw new BranchNotFoundError(chatId, name);
    return branch;
  }

  function findNode(chatId: string, id: string): NodeRow | undefined {
    return rows<NodeRow>(
      'SELECT * FROM ctxgraph_nodes WHERE chat_id = ? AND id = ?',
      chatId,
      id,
    )[0];
  }

  function hasNode(chatId: string, id: string): boolean {
    return (
      rows<{ found: number }>(
        'SELECT 1 AS found FROM ctxgraph_nodes WHERE chat_id = ? AND id = ?',
        chatId,
        id,
      ).length > 0
    );
  }

  function assertNodeExists(chatId: string, id: string | null): void {
    if (id !== null && !hasNode(chatId, id)) throw new MessageNotFoundError(chatId, id);
  }

  function branchNames(chatId: string): string[] {
    return rows<{ name: string }>(
      'SELECT name FROM ctxgraph_branches WHERE chat_id = ? ORDER BY rowid',
      chatId,
    ).map((row) => row.name);
  }

  /** Moves the chat's `updatedAt` to now (never back) and returns it. */
  function touchChat(chat: ChatRow, floor = chat.updated_at): number {
    const now = Math.max(Date.now(), floor);
    sql.exec('UPDATE ctxgraph_chats SET updated_at = ? WHERE id = ?', now, chat.id);
    return now;
  }

  function insertBranch(
    chat: ChatRow,
    name: string,
    headMessageId: string | null,
    activate: boolean,
  ): BranchRow {
    const now = Math.max(Date.now(), chat.updated_at);
    sql.exec(
      'INSERT INTO ctxgraph_branches (chat_id, name, head_message_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
      chat.id,
      name,
      headMessageId,
      now,
      now,
    );
    if (activate)
      sql.exec('UPDATE ctxgraph_chats SET active_branch = ? WHERE id = ?', name, chat.id);
    touchChat(chat, now);
    return {
      chat_id: chat.id,
      name,
      head_message_id: headMessageId,
      created_at: now,
      updated_at: now,
    };
  }

  /** The messages with a node id for each new version, allocated inside the write. */
  function withVersionIds(
    chatId: string,
    messages: readonly PreparedCommitMessage[],
  ): readonly PreparedCommitMessage[] {
    return assignVersionIds(messages, {
      newestNodeOf: (messageId) =>
        rows<{ id: string }>(
          'SELECT id FROM ctxgraph_nodes WHERE chat_id = ? AND message_id = ? ORDER BY sequence DESC LIMIT 1',
          chatId,
          messageId,
        )[0]?.id ?? null,
      hasNode: (nodeId) => hasNode(chatId, nodeId),
    });
  }

  /**
   * A message whose id exists in the chat may only replace a node on the branch (the head or an
   * ancestor): one recursive query walks the chain and keeps the batch's existing ids it meets;
   * the first id of the batch it did not meet is refused with `MessageIdConflictError`. No query
   * at all when the batch holds only new ids.
   */
  function assertOnBranch(
    chatId: string,
    branchName: string,
    headMessageId: string | null,
    messages: readonly PreparedCommitMessage[],
  ): void {
    const existing = messages.filter((message) => hasNode(chatId, message.id));
    if (existing.length === 0) return;
    const onChain = new Set(
      headMessageId === null
        ? []
        : rows<{ id: string }>(
            `WITH RECURSIVE chain(id, parent_id) AS (
               SELECT id, parent_id FROM ctxgraph_nodes WHERE chat_id = ?1 AND id = ?2
               UNION ALL
               SELECT n.id, n.parent_id FROM chain JOIN ctxgraph_nodes n ON n.chat_id = ?1 AND n.id = chain.parent_id
             )
             SELECT id FROM chain WHERE id IN (SELECT value FROM json_each(?3))`,
            chatId,
            headMessageId,
            JSON.stringify(existing.map((message) => message.id)),
          ).map((row) => row.id),
    );
    const offBranch = existing.find((message) => !onChain.has(message.id));
    if (offBranch !== undefined)
      throw new MessageIdConflictError({ chatId, branch: branchName, messageId: offBranch.id });
  }

  /** Writes the batch on the branch (checks done first: nothing is written on a refusal). */
  function write(
    chat: ChatRow,
    branch: BranchRow,
    messages: readonly PreparedCommitMessage[],
  ): CommitResult {
    assertOnBranch(chat.id, branch.name, branch.head_message_id, messages);
    const now = Math.max(Date.now(), chat.updated_at);
    const revision = chat.revision + 1;
    let head = branch.head_message_id;
    let nextSequence = chat.next_sequence;
    let replaced = false;
    const written: MessageNodeRecord[] = [];
    for (const message of messages) {
      const existing = findNode(chat.id, message.id);
      if (existing !== undefined) {
        // A replaced node keeps its engine record unless a new one is given.
        const engineRecord = message.engineRecordJson ?? existing.engine_record;
        sql.exec(
          'UPDATE ctxgraph_nodes SET message_id = ?, message = ?, engine_record = ?, updated_at = ? WHERE chat_id = ? AND id = ?',
          message.messageId,
          message.json,
          engineRecord,
          now,
          chat.id,
          message.id,
        );
        replaced = true;
        written.push(
          nodeRecord({
            ...existing,
            message_id: message.messageId,
            message: message.json,
            engine_record: engineRecord,
            updated_at: now,
          }),
        );
        continue;
      }
      const node: NodeRow = {
        chat_id: chat.id,
        id: message.id,
        message_id: message.messageId,
        parent_id: head,
        sequence: nextSequence,
        message: message.json,
        engine_record: message.engineRecordJson,
        created_at: now,
        updated_at: now,
      };
      sql.exec(
        'INSERT INTO ctxgraph_nodes (chat_id, id, message_id, parent_id, sequence, message, engine_record, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
        node.chat_id,
        node.id,
        node.message_id,
        node.parent_id,
        node.sequence,
        node.message,
        node.engine_record,
        node.created_at,
        node.updated_at,
      );
      nextSequence += 1;
      head = node.id;
      written.push(nodeRecord(node));
    }
    if (head !== branch.head_message_id) {
      sql.exec(
        'UPDATE ctxgraph_branches SET head_message_id = ?, updated_at = ? WHERE chat_id = ? AND name = ?',
        head,
        now,
        chat.id,
        branch.name,
      );
    }
    const rewrittenAt = replaced ? revision : chat.rewritten_at;
    sql.exec(
      'UPDATE ctxgraph_chats SET revision = ?, rewritten_at = ?, next_sequence = ?, updated_at = ? WHERE id = ?',
      revision,
      rewrittenAt,
      nextSequence,
      now,
      chat.id,
    );
    return { headMessageId: head, revision, rewrittenAt, nodes: written };
  }

  return {
    name: STORE_NAME,
    capabilities: { persistent: true, multiProcess: false },
    maxJsonBytes: DEFAULT_MAX_JSON_BYTES,

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
        for (const table of [
          'ctxgraph_context_lanes',
          'ctxgraph_checkpoints',
          'ctxgraph_branches',
          'ctxgraph_nodes',
        ] as const)
          sql.exec(`DELETE FROM ${table} WHERE chat_id = ?`, chatId);
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

    getHead(input) {
      const chat = requireChat(input.chatId);
      const branch = requireBranch(chat.id, input.branch);
      return {
        revision: chat.revision,
        headMessageId: branch.head_message_id,
        rewrittenAt: chat.rewritten_at,
      };
    },

    commit(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        const fork = input.fork;
        if (fork !== undefined) {
          // Every refusal is checked before the branch exists, so a refused fork-commit leaves
          // neither branch nor node.
          const start = input.expectedHeadId;
          assertNodeExists(chat.id, start);
          const name = forkBranchName(fork.from, branchNames(chat.id));
          const messages = withVersionIds(chat.id, input.messages);
          assertOnBranch(chat.id, name, start, messages);
          const branch = insertBranch(chat, name, start, fork.activate);
          const current = requireChat(chat.id);
          return { ...write(current, branch, messages), branch: name };
        }
        const branch = requireBranch(chat.id, input.branch);
        if (branch.head_message_id !== input.expectedHeadId) {
          throw new HeadConflictError({
            chatId: chat.id,
            branch: branch.name,
            expectedHeadId: input.expectedHeadId,
            currentHeadId: branch.head_message_id,
          });
        }
        return write(chat, branch, withVersionIds(chat.id, input.messages));
      });
    },

    append(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        const branch = requireBranch(chat.id, input.branch);
        const result = write(chat, branch, withVersionIds(chat.id, input.messages));
        return { ...result, previousHeadId: branch.head_message_id };
      });
    },

    // One recursive query from the head back, at most `limit` nodes, stopping before `until`.
    getChain(input) {
      const chat = requireChat(input.chatId);
      if (!hasNode(chat.id, input.headMessageId))
        throw new MessageNotFoundError(chat.id, input.headMessageId);
      const limit = input.limit ?? Number.MAX_SAFE_INTEGER;
      const until = input.until ?? null;
      const newestFirst =
        until === input.headMessageId
          ? []
          : rows<NodeRow>(
              `WITH RECURSIVE chain(id, parent_id, depth) AS (
                 SELECT id, parent_id, 1 FROM ctxgraph_nodes WHERE chat_id = ?1 AND id = ?2
                 UNION ALL
                 SELECT n.id, n.parent_id, chain.depth + 1
                   FROM chain JOIN ctxgraph_nodes n ON n.chat_id = ?1 AND n.id = chain.parent_id
                  WHERE chain.depth < ?3 AND chain.parent_id IS NOT ?4
               )
               SELECT n.* FROM chain JOIN ctxgraph_nodes n ON n.chat_id = ?1 AND n.id = chain.id
               ORDER BY chain.depth DESC`,
              chat.id,
              input.headMessageId,
              limit,
              until,
            );
      const oldest = newestFirst[0];
      const next = oldest === undefined ? input.headMessageId : oldest.parent_id;
      const reachedUntil = next !== null && next === until;
      if (
        next !== null &&
        !reachedUntil &&
        newestFirst.length < limit &&
        oldest !== undefined &&
        !hasNode(chat.id, next)
      )
        throw missingRow('getChain(input)', `node "${next}" of chat "${chat.id}"`);
      return {
        nodes: newestFirst.map(nodeRecord),
        nextCursor: next === null || reachedUntil ? null : next,
        reachedUntil,
      };
    },

    getMessage(input) {
      const chat = requireChat(input.chatId);
      const node = findNode(chat.id, input.messageId);
      return node === undefined ? null : nodeRecord(node);
    },

    findMessageNodes(input) {
      const chat = requireChat(input.chatId);
      return rows<NodeRow>(
        'SELECT * FROM ctxgraph_nodes WHERE chat_id = ? AND message_id = ? ORDER BY sequence DESC LIMIT ?',
        chat.id,
        input.messageId,
        input.limit,
      ).map(nodeRecord);
    },

    createBranch(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        if (findBranch(chat.id, input.name) !== undefined)
          throw new BranchExistsError(chat.id, input.name);
        assertNodeExists(chat.id, input.headMessageId);
        return branchRecord(insertBranch(chat, input.name, input.headMessageId, input.activate));
      });
    },

    forkBranch(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        assertNodeExists(chat.id, input.headMessageId);
        const name = forkBranchName(input.from, branchNames(chat.id));
        return branchRecord(insertBranch(chat, name, input.headMessageId, input.activate));
      });
    },

    // An UPDATE keeps the row (and so its rowid: the branch keeps its place in the listing).
    renameBranch(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        const branch = requireBranch(chat.id, input.from);
        if (findBranch(chat.id, input.to) !== undefined)
          throw new BranchExistsError(chat.id, input.to);
        const now = Math.max(Date.now(), chat.updated_at, branch.updated_at);
        sql.exec(
          'UPDATE ctxgraph_branches SET name = ?, updated_at = ? WHERE chat_id = ? AND name = ?',
          input.to,
          now,
          chat.id,
          input.from,
        );
        if (chat.active_branch === input.from)
          sql.exec('UPDATE ctxgraph_chats SET active_branch = ? WHERE id = ?', input.to, chat.id);
        touchChat(chat, now);
        return branchRecord({ ...branch, name: input.to, updated_at: now });
      });
    },

    getBranch(input) {
      const chat = requireChat(input.chatId);
      const branch = findBranch(chat.id, input.name);
      return branch === undefined ? null : branchRecord(branch);
    },

    listBranches(chatId) {
      const chat = requireChat(chatId);
      return rows<BranchRow>(
        'SELECT * FROM ctxgraph_branches WHERE chat_id = ? ORDER BY rowid',
        chat.id,
      ).map(branchRecord);
    },

    setActiveBranch(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        const branch = requireBranch(chat.id, input.name);
        sql.exec('UPDATE ctxgraph_chats SET active_branch = ? WHERE id = ?', branch.name, chat.id);
        touchChat(chat);
        return branchRecord(branch);
      });
    },

    // A moved checkpoint is a new row under an old name: it lists where a new one would.
    createCheckpoint(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        assertNodeExists(chat.id, input.messageId);
        const exists =
          rows<CheckpointRow>(
            'SELECT * FROM ctxgraph_checkpoints WHERE chat_id = ? AND name = ?',
            chat.id,
            input.name,
          ).length > 0;
        if (exists && !input.replace) throw new CheckpointExistsError(chat.id, input.name);
        const now = Math.max(Date.now(), chat.updated_at);
        sql.exec(
          'DELETE FROM ctxgraph_checkpoints WHERE chat_id = ? AND name = ?',
          chat.id,
          input.name,
        );
        const checkpoint: CheckpointRow = {
          chat_id: chat.id,
          name: input.name,
          message_id: input.messageId,
          created_at: now,
        };
        sql.exec(
          'INSERT INTO ctxgraph_checkpoints (chat_id, name, message_id, created_at) VALUES (?, ?, ?, ?)',
          checkpoint.chat_id,
          checkpoint.name,
          checkpoint.message_id,
          checkpoint.created_at,
        );
        touchChat(chat, now);
        return checkpointRecord(checkpoint);
      });
    },

    getCheckpoint(input) {
      const chat = requireChat(input.chatId);
      const checkpoint = rows<CheckpointRow>(
        'SELECT * FROM ctxgraph_checkpoints WHERE chat_id = ? AND name = ?',
        chat.id,
        input.name,
      )[0];
      return checkpoint === undefined ? null : checkpointRecord(checkpoint);
    },

    listCheckpoints(chatId) {
      const chat = requireChat(chatId);
      return rows<CheckpointRow>(
        'SELECT * FROM ctxgraph_checkpoints WHERE chat_id = ? ORDER BY rowid',
        chat.id,
      ).map(checkpointRecord);
    },

    // Never deletes the node.
    deleteCheckpoint(input) {
      return storage.transactionSync(() => {
        const chat = requireChat(input.chatId);
        const deleted = rows<{ name: string }>(
          'DELETE FROM ctxgraph_checkpoints WHERE chat_id = ? AND name = ? RETURNING name',
          chat.id,
          input.name,
        );
        if (deleted.length === 0) return false;
        touchChat(chat);
        return true;
      });
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
