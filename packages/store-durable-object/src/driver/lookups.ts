import {
  BranchNotFoundError,
  ChatNotFoundError,
  MessageNotFoundError,
} from '@ctxgraph/fragments-core';
import { type BranchRow, type ChatRow, type LaneRow, type NodeRow, rowsAs } from './rows';
import type { DurableObjectStorageLike, SqlStorageLike, SqlValue } from './sql-storage';

/** The branch every chat starts with. */
export const MAIN_BRANCH = 'main';

/** What a message write reads before it writes: {@link Lookups.writeTarget}. */
export interface WriteTarget {
  /** The chat, or undefined. */
  readonly chat: ChatRow | undefined;
  /** The branch of the chat, or undefined (and undefined when the chat is). */
  readonly branch: BranchRow | undefined;
  /** Whether one of the ids asked about is a node of the chat already. */
  readonly anyNode: boolean;
}

/**
 * The reads and small writes every operation shares, over one object's storage. Each runs one
 * synchronous statement; the operations compose them inside one `transactionSync`.
 */
export interface Lookups {
  /** The object's storage (for `transactionSync`). */
  readonly storage: DurableObjectStorageLike;
  /** Its SQL API. */
  readonly sql: SqlStorageLike;
  /** The rows of a query, as `Row`. */
  rows<Row>(query: string, ...bindings: SqlValue[]): Row[];
  /** The chat, or undefined. */
  findChat(chatId: string): ChatRow | undefined;
  /** The chat, or `ChatNotFoundError`. */
  requireChat(chatId: string): ChatRow;
  /**
   * The chat row, the branch row and whether any of `nodeIds` is a node of the chat, in one
   * statement: what a commit or append reads before it writes (three reads made it cost 1.7x its
   * floor a turn, each statement a trip through the platform's SQL API). A null `branchName` is
   * the chat's active branch (`openChat` reads the chat and that branch so).
   */
  writeTarget(chatId: string, branchName: string | null, nodeIds: readonly string[]): WriteTarget;
  /** The chat's context lane, or undefined before its first save. */
  findLane(chatId: string): LaneRow | undefined;
  /** The branch, or undefined. */
  findBranch(chatId: string, name: string): BranchRow | undefined;
  /** The branch, or `BranchNotFoundError`. */
  requireBranch(chatId: string, name: string): BranchRow;
  /** The node, or undefined. */
  findNode(chatId: string, id: string): NodeRow | undefined;
  /** Whether the chat has a node of that id. */
  hasNode(chatId: string, id: string): boolean;
  /** `MessageNotFoundError` unless the id is null or a node of the chat. */
  assertNodeExists(chatId: string, id: string | null): void;
  /** The chat's branch names, oldest first. */
  branchNames(chatId: string): string[];
  /** Moves the chat's `updatedAt` to now (never back, never before `floor`) and returns it. */
  touchChat(chat: ChatRow, floor?: number): number;
  /** Inserts a branch (activating it when asked) and moves the chat's `updatedAt`. */
  insertBranch(
    chat: ChatRow,
    name: string,
    headMessageId: string | null,
    activate: boolean,
  ): BranchRow;
}

/** The branch's columns and the node probe {@link Lookups.writeTarget} reads beside the chat's. */
interface WriteTargetColumns {
  readonly branch_name: string | null;
  readonly branch_head_message_id: string | null;
  readonly branch_created_at: number | null;
  readonly branch_updated_at: number | null;
  readonly any_node: number;
}

/** The shared lookups over `storage`. */
export function lookups(storage: DurableObjectStorageLike): Lookups {
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

  function writeTarget(
    chatId: string,
    branchName: string | null,
    nodeIds: readonly string[],
  ): WriteTarget {
    const row = rows<ChatRow & WriteTargetColumns>(
      `SELECT c.*, b.name AS branch_name, b.head_message_id AS branch_head_message_id,
         b.created_at AS branch_created_at, b.updated_at AS branch_updated_at,
         EXISTS (SELECT 1 FROM ctxgraph_nodes n
                  WHERE n.chat_id = c.id AND n.id IN (SELECT value FROM json_each(?3))) AS any_node
         FROM ctxgraph_chats c LEFT JOIN ctxgraph_branches b
           ON b.chat_id = c.id AND b.name = coalesce(?2, c.active_branch)
        WHERE c.id = ?1`,
      chatId,
      branchName,
      JSON.stringify(nodeIds),
    )[0];
    if (row === undefined) return { chat: undefined, branch: undefined, anyNode: false };
    const {
      branch_name,
      branch_head_message_id,
      branch_created_at,
      branch_updated_at,
      any_node,
      ...chat
    } = row;
    return {
      chat,
      branch:
        branch_name === null
          ? undefined
          : {
              chat_id: chat.id,
              name: branch_name,
              head_message_id: branch_head_message_id,
              created_at: branch_created_at as number,
              updated_at: branch_updated_at as number,
            },
      anyNode: any_node === 1,
    };
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

  return {
    storage,
    sql,
    rows,
    findChat,
    requireChat,
    writeTarget,
    findLane,
    findBranch,
    requireBranch,
    findNode,
    hasNode,
    assertNodeExists,
    branchNames,
    touchChat,
    insertBranch,
  };
}
