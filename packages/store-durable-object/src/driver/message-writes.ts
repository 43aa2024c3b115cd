import {
  type CommitResult,
  MessageIdConflictError,
  type MessageNodeRecord,
} from '@ctxgraph/fragments-core';
import {
  assignVersionIds,
  type PreparedAppend,
  type PreparedCommit,
  type PreparedCommitMessage,
} from '@ctxgraph/fragments-core/store-kit';
import type { Lookups } from './lookups';
import { type BranchRow, type ChatRow, type NodeRow, writtenNodeRecord } from './rows';
import type { SqlStorageLike } from './sql-storage';

const INSERT_NODE =
  'INSERT INTO ctxgraph_nodes (chat_id, id, message_id, parent_id, sequence, message, engine_record, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)';

/** Inserts one node row. */
function insertNode(sql: SqlStorageLike, node: NodeRow): void {
  sql.exec(
    INSERT_NODE,
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
}

/**
 * The chat's row, bumped for a write of `?1` new nodes at time `?2` (never before its last
 * update), returning what the write needs.
 */
const BUMP_CHAT =
  'UPDATE ctxgraph_chats SET revision = revision + 1, next_sequence = next_sequence + ?1, updated_at = max(?2, updated_at) WHERE id = ?3 RETURNING revision, rewritten_at, next_sequence, updated_at';

/** {@link BUMP_CHAT}, returning the head of branch `?4` too (null also when there is no such branch: the head's move then finds no row). */
const BUMP_CHAT_READING_HEAD =
  'UPDATE ctxgraph_chats SET revision = revision + 1, next_sequence = next_sequence + ?1, updated_at = max(?2, updated_at) WHERE id = ?3 RETURNING revision, rewritten_at, next_sequence, updated_at, (SELECT head_message_id FROM ctxgraph_branches WHERE chat_id = ?3 AND name = ?4) AS head';

const NO_NODES: ReadonlyMap<string, NodeRow> = new Map();

/** The message write shared by `commit`, `append` and fork-commits. */
export interface MessageWrites {
  /** The messages with a node id for each new version, allocated inside the write. */
  withVersionIds(
    chatId: string,
    messages: readonly PreparedCommitMessage[],
  ): readonly PreparedCommitMessage[];
  /** `MessageIdConflictError` for the first existing id of the batch not on the branch's chain. */
  assertOnBranch(
    chatId: string,
    branchName: string,
    headMessageId: string | null,
    messages: readonly PreparedCommitMessage[],
    existing?: ReadonlyMap<string, NodeRow>,
  ): void;
  /**
   * Writes the batch on the branch (checks first: nothing is written on a refusal). With
   * `anyNode` false (the caller read that none of the batch's ids is a node of the chat), the
   * batch is all new nodes and the read of the existing ones is skipped.
   */
  write(
    chat: ChatRow,
    branch: BranchRow,
    messages: readonly PreparedCommitMessage[],
    anyNode?: boolean,
  ): CommitResult;
  /**
   * A commit of new nodes at the expected head (no fork, no new version) in its own
   * `transactionSync`, in the statements of the write alone, then `then` (the commit's live
   * reply) in the same transaction: or undefined, with nothing written, when it is not one or
   * anything threw (see the function), and the caller takes the checked path.
   */
  commitNew(input: PreparedCommit, then: (written: CommitResult) => void): CommitResult | undefined;
  /** `append`'s write of new nodes at the branch's current head, as {@link commitNew}. */
  appendNew(input: PreparedAppend): (CommitResult & { previousHeadId: string | null }) | undefined;
}

/**
 * Thrown inside the transaction of {@link MessageWrites.commitNew} to roll it back: the commit
 * is not a plain commit of new nodes at the expected head, and the checked path decides.
 */
const NOT_NEW = new Error('not a plain commit of new nodes at the expected head');

/** The message write over the shared lookups. */
export function messageWrites(db: Lookups): MessageWrites {
  const { storage, sql, rows, hasNode } = db;

  /** The batch's ids that are nodes of the chat already, with their rows: one query. */
  function existingNodes(
    chatId: string,
    messages: readonly PreparedCommitMessage[],
  ): ReadonlyMap<string, NodeRow> {
    const found = rows<NodeRow>(
      'SELECT * FROM ctxgraph_nodes WHERE chat_id = ? AND id IN (SELECT value FROM json_each(?))',
      chatId,
      JSON.stringify(messages.map((message) => message.id)),
    );
    return new Map(found.map((row) => [row.id, row]));
  }

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
    known: ReadonlyMap<string, NodeRow> = existingNodes(chatId, messages),
  ): void {
    const existing = messages.filter((message) => known.has(message.id));
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
    anyNode = true,
  ): CommitResult {
    // The batch's existing nodes, read once for the branch check and the writes below.
    const known = anyNode ? existingNodes(chat.id, messages) : NO_NODES;
    assertOnBranch(chat.id, branch.name, branch.head_message_id, messages, known);
    const now = Math.max(Date.now(), chat.updated_at);
    const revision = chat.revision + 1;
    let head = branch.head_message_id;
    let nextSequence = chat.next_sequence;
    let replaced = false;
    const written: MessageNodeRecord[] = [];
    for (const message of messages) {
      const existing = known.get(message.id);
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
          writtenNodeRecord({
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
      insertNode(sql, node);
      nextSequence += 1;
      head = node.id;
      written.push(writtenNodeRecord(node));
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

  /**
   * The turn's write, with no read before it: the chat's row gives its revision and sequence
   * numbers from its own update (`RETURNING`), each node is inserted (a node id the chat has
   * already fails its insert: the primary key), and the head moves only where it is still the
   * expected one. Anything else (no such chat, no such branch, another head, an id that exists,
   * any error of the database) rolls the transaction back and answers undefined: the checked
   * path then reads what it needs and throws the contract's error, or replaces the nodes. A turn
   * pays the floor's four statements; a refused or replacing commit pays the rolled-back try
   * too.
   */
  function commitNew(
    input: PreparedCommit,
    then: (written: CommitResult) => void,
  ): CommitResult | undefined {
    if (input.fork !== undefined) return undefined;
    const written = writeNew(
      input.chatId,
      input.branch,
      input.messages,
      input.expectedHeadId,
      (result) => then(result),
    );
    if (written === undefined) return undefined;
    const { previousHeadId: _, ...result } = written;
    return result;
  }

  /**
   * The turn's write, with no read before it: the chat's row gives its revision and sequence
   * numbers from its own update (`RETURNING`, with the branch's head for an append), each node is
   * inserted (a node id the chat has already fails its insert: the primary key), and the head
   * moves only where it is still the one the write attached to. Anything else (no such chat, no
   * such branch, another head, an id that exists, any error of the database) rolls the
   * transaction back and answers undefined: the checked path then reads what it needs and throws
   * the contract's error, or replaces the nodes. A turn pays the floor's four statements; a
   * refused or replacing write pays the rolled-back try too. `expectedHeadId` undefined attaches
   * at the branch's current head (`append`). `then` runs last in the transaction (a commit's live
   * reply): a refusal it throws rolls the messages back too, and the checked path, which checks
   * in the contract's order, throws it again.
   */
  function writeNew(
    chatId: string,
    branch: string,
    messages: readonly PreparedCommitMessage[],
    expectedHeadId: string | null | undefined,
    then?: (written: CommitResult) => void,
  ): (CommitResult & { previousHeadId: string | null }) | undefined {
    if (messages.some((message) => message.newVersion)) return undefined;
    try {
      return storage.transactionSync(() => {
        const now = Date.now();
        const chat = (
          expectedHeadId === undefined
            ? sql.exec(BUMP_CHAT_READING_HEAD, messages.length, now, chatId, branch)
            : sql.exec(BUMP_CHAT, messages.length, now, chatId)
        ).toArray()[0];
        if (chat === undefined) throw NOT_NEW;
        const at = chat.updated_at as number;
        const previousHeadId =
          expectedHeadId === undefined ? (chat.head as string | null) : expectedHeadId;
        let sequence = (chat.next_sequence as number) - messages.length;
        let head = previousHeadId;
        const written: MessageNodeRecord[] = [];
        for (const message of messages) {
          const node: NodeRow = {
            chat_id: chatId,
            id: message.id,
            message_id: message.messageId,
            parent_id: head,
            sequence,
            message: message.json,
            engine_record: message.engineRecordJson,
            created_at: at,
            updated_at: at,
          };
          insertNode(sql, node);
          written.push(writtenNodeRecord(node));
          sequence += 1;
          head = node.id;
        }
        const moved = sql
          .exec(
            'UPDATE ctxgraph_branches SET head_message_id = ?, updated_at = ? WHERE chat_id = ? AND name = ? AND head_message_id IS ? RETURNING 1',
            head,
            at,
            chatId,
            branch,
            previousHeadId,
          )
          .toArray();
        if (moved.length !== 1) throw NOT_NEW;
        const result = {
          headMessageId: head,
          revision: chat.revision as number,
          rewrittenAt: chat.rewritten_at as number,
          nodes: written,
          previousHeadId,
        };
        then?.(result);
        return result;
      });
    } catch {
      // Rolled back: the checked path reads the chat and says why, or writes what this could not.
      return undefined;
    }
  }

  return {
    withVersionIds,
    assertOnBranch,
    write,
    commitNew,
    appendNew: (input) => writeNew(input.chatId, input.branch, input.messages, undefined),
  };
}
