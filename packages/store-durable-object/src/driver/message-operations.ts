import {
  BranchNotFoundError,
  ChatNotFoundError,
  HeadConflictError,
  type MessageNodeRecord,
  MessageNotFoundError,
} from '@ctxgraph/fragments-core';
import {
  type ContextStoreDriver,
  forkBranchName,
  type PreparedCommitMessage,
} from '@ctxgraph/fragments-core/store-kit';
import type { LiveReplyOperations } from './live-replies';
import type { Lookups } from './lookups';
import type { MessageWrites } from './message-writes';
import { CHAIN_COLUMNS, chainNodeRecord, missingRow, type NodeRow, nodeRecord } from './rows';

/** {@link CHAIN_COLUMNS} of the node aliased `n`. */
const CHAIN_COLUMNS_OF_N = CHAIN_COLUMNS.split(', ')
  .map((column) => `n.${column}`)
  .join(', ');

/** The message operations of the driver. */
export type MessageOperations = Required<
  Pick<
    ContextStoreDriver,
    'getHead' | 'commit' | 'append' | 'getChain' | 'getMessage' | 'findMessageNodes'
  >
>;

/**
 * Message nodes: the head read, the two head-moving writes, and chain and node reads. A commit's
 * `startReply` / `endReply` are written by `commitLive` in the commit's `transactionSync`.
 */
export function messageOperations(
  db: Lookups,
  writes: MessageWrites,
  commitLive: LiveReplyOperations['commitLive'],
): MessageOperations {
  const {
    storage,
    sql,
    rows,
    findChat,
    requireChat,
    requireBranch,
    writeTarget,
    findNode,
    hasNode,
    assertNodeExists,
    branchNames,
    insertBranch,
  } = db;
  const { withVersionIds, assertOnBranch, write, commitNew, appendNew } = writes;
  return {
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
      // A turn (new nodes at the expected head, with its live reply started or ended) is written
      // without a read first; anything else, refusals included, takes the checked path below.
      const fast = commitNew(input, (written) => {
        commitLive.before(input);
        commitLive.after(input, written, input.branch);
      });
      if (fast !== undefined) return fast;
      return storage.transactionSync(() => {
        // The chat, the branch and the batch's ids among the nodes: one read (a fork-commit reads
        // its own way below, the branch it writes does not exist yet).
        const target =
          input.fork === undefined
            ? writeTarget(input.chatId, input.branch, plainIds(input.messages))
            : { chat: findChat(input.chatId), branch: undefined, anyNode: true };
        const chat = target.chat;
        if (chat === undefined) throw new ChatNotFoundError(input.chatId);
        commitLive.before(input);
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
          const written = { ...write(current, branch, messages), branch: name };
          commitLive.after(input, written, name);
          return written;
        }
        const branch = target.branch;
        if (branch === undefined) throw new BranchNotFoundError(chat.id, input.branch);
        if (branch.head_message_id !== input.expectedHeadId) {
          throw new HeadConflictError({
            chatId: chat.id,
            branch: branch.name,
            expectedHeadId: input.expectedHeadId,
            currentHeadId: branch.head_message_id,
          });
        }
        const written = write(
          chat,
          branch,
          withVersionIds(chat.id, input.messages),
          target.anyNode,
        );
        commitLive.after(input, written, branch.name);
        return written;
      });
    },

    append(input) {
      // New nodes at the branch's head are written without a read first (see `commit`).
      const fast = appendNew(input);
      if (fast !== undefined) return fast;
      return storage.transactionSync(() => {
        const target = writeTarget(input.chatId, input.branch, plainIds(input.messages));
        const chat = target.chat;
        if (chat === undefined) throw new ChatNotFoundError(input.chatId);
        const branch = target.branch;
        if (branch === undefined) throw new BranchNotFoundError(chat.id, input.branch);
        const result = write(chat, branch, withVersionIds(chat.id, input.messages), target.anyNode);
        return { ...result, previousHeadId: branch.head_message_id };
      });
    },

    // One recursive query from the head back, at most `limit` nodes, stopping before `until`.
    // The columns ride along the walk (one lookup a node) and come back as `raw()` arrays: a
    // row object of every column a node cost the cold read of 1,000 nodes 2.7x its floor. A
    // chain that reads nodes is the one statement of the call: nodes of the chat prove the chat
    // exists (deleting a chat deletes its nodes), so the chat and the head are looked up only
    // when the walk found nothing, to say which is missing.
    getChain(input) {
      const chatId = input.chatId;
      const limit = input.limit ?? Number.MAX_SAFE_INTEGER;
      const until = input.until ?? null;
      const newestFirst: MessageNodeRecord[] = [];
      if (until !== input.headMessageId) {
        const cursor = sql.exec(
          `WITH RECURSIVE chain(${CHAIN_COLUMNS}, depth) AS (
             SELECT ${CHAIN_COLUMNS}, 1 FROM ctxgraph_nodes WHERE chat_id = ?1 AND id = ?2
             UNION ALL
             SELECT ${CHAIN_COLUMNS_OF_N}, chain.depth + 1
               FROM chain JOIN ctxgraph_nodes n ON n.chat_id = ?1 AND n.id = chain.parent_id
              WHERE chain.depth < ?3 AND chain.parent_id IS NOT ?4
           )
           SELECT ${CHAIN_COLUMNS} FROM chain ORDER BY depth DESC`,
          chatId,
          input.headMessageId,
          limit,
          until,
        );
        for (const row of cursor.raw()) newestFirst.push(chainNodeRecord(chatId, row));
      }
      const oldest = newestFirst[0];
      if (oldest === undefined) {
        const chat = requireChat(chatId);
        if (!hasNode(chat.id, input.headMessageId))
          throw new MessageNotFoundError(chat.id, input.headMessageId);
      }
      const next = oldest === undefined ? input.headMessageId : oldest.parentId;
      const reachedUntil = next !== null && next === until;
      if (
        next !== null &&
        !reachedUntil &&
        newestFirst.length < limit &&
        oldest !== undefined &&
        !hasNode(chatId, next)
      )
        throw missingRow('getChain(input)', `node "${next}" of chat "${chatId}"`);
      return {
        nodes: newestFirst,
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
  };
}

/**
 * The node ids of the entries that are not new versions: the ids a write may find among the
 * chat's nodes (a new version's node id is allocated inside the write, never one that exists).
 */
function plainIds(messages: readonly PreparedCommitMessage[]): string[] {
  const ids: string[] = [];
  for (const message of messages) if (!message.newVersion) ids.push(message.id);
  return ids;
}
