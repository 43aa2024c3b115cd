import {
  type CommitResult,
  HeadConflictError,
  MessageIdConflictError,
  type MessageNodeRecord,
  MessageNotFoundError,
  StoreError,
} from '@ctxgraph/fragments-core';
import {
  assignVersionIds,
  type ContextStoreDriver,
  forkBranchName,
  type PreparedCommit,
  type PreparedCommitMessage,
} from '@ctxgraph/fragments-core/store-kit';
import {
  type BranchState,
  type ChatState,
  indexNode,
  type MemoryChats,
  type NodeState,
  nodeRecord,
  requireBranch,
  requireChat,
  timeAfter,
  unindexNode,
} from './memory-state';

/** The message operations of the memory driver. */
export type MessageOperations = Required<
  Pick<
    ContextStoreDriver,
    'getHead' | 'commit' | 'append' | 'getChain' | 'getMessage' | 'findMessageNodes'
  >
>;

/**
 * Message nodes: the head read, the two head-moving writes, and chain and node reads. Each write
 * reads the head and moves it with no `await` in between, so interleaved async callers get exactly
 * the compare-and-set (`commit`) or the serialization (`append`) a database transaction gives.
 */
export function messageOperations(chats: MemoryChats): MessageOperations {
  return {
    // O(1): the one read a warm resolve makes.
    getHead(input) {
      const chat = requireChat(chats, input.chatId);
      const branch = requireBranch(chat, input.branch);
      return {
        revision: chat.revision,
        headMessageId: branch.headMessageId,
        rewrittenAt: chat.rewrittenAt,
      };
    },

    commit(input) {
      const chat = requireChat(chats, input.chatId);
      if (input.fork !== undefined) return forkCommit(chat, input, input.fork);
      const branch = requireBranch(chat, input.branch);
      if (branch.headMessageId !== input.expectedHeadId) {
        throw new HeadConflictError({
          chatId: chat.id,
          branch: branch.name,
          expectedHeadId: input.expectedHeadId,
          currentHeadId: branch.headMessageId,
        });
      }
      return write(chat, branch, withVersionIds(chat, input.messages));
    },

    append(input) {
      const chat = requireChat(chats, input.chatId);
      const branch = requireBranch(chat, input.branch);
      const previousHeadId = branch.headMessageId;
      return { ...write(chat, branch, withVersionIds(chat, input.messages)), previousHeadId };
    },

    // O(nodes returned).
    getChain(input) {
      const chat = requireChat(chats, input.chatId);
      if (!chat.nodes.has(input.headMessageId))
        throw new MessageNotFoundError(chat.id, input.headMessageId);
      const limit = input.limit ?? Number.POSITIVE_INFINITY;
      const newestFirst: MessageNodeRecord[] = [];
      let current: string | null = input.headMessageId;
      while (current !== null && current !== input.until && newestFirst.length < limit) {
        const node = chat.nodes.get(current);
        // A parent always exists: nodes go with their chat, or through prune, which removes only
        // nodes nothing reaches (and so every descendant of each).
        if (node === undefined)
          throw new StoreError(
            `getChain(input): node "${current}" of chat "${chat.id}" is missing.`,
          );
        newestFirst.push(nodeRecord(chat.id, node));
        current = node.parentId;
      }
      const reachedUntil = current !== null && current === input.until;
      return {
        nodes: newestFirst.reverse(),
        nextCursor: current === null || reachedUntil ? null : current,
        reachedUntil,
      };
    },

    getMessage(input) {
      const chat = requireChat(chats, input.chatId);
      const node = chat.nodes.get(input.messageId);
      return node === undefined ? null : nodeRecord(chat.id, node);
    },

    // O(limit): the index keeps each message id's nodes in sequence order.
    findMessageNodes(input) {
      const chat = requireChat(chats, input.chatId);
      const list = chat.byMessageId.get(input.messageId);
      if (list === undefined) return [];
      const found: MessageNodeRecord[] = [];
      for (let index = list.length - 1; index >= 0 && found.length < input.limit; index -= 1)
        found.push(nodeRecord(chat.id, list[index] as NodeState));
      return found;
    },
  };
}

/**
 * A commit on a new branch: checks everything a refusal could come from (the start node, the
 * name, the on-branch rule against the new branch's chain) before creating the branch, so a
 * refused fork-commit leaves neither branch nor node.
 */
function forkCommit(
  chat: ChatState,
  input: PreparedCommit,
  fork: NonNullable<PreparedCommit['fork']>,
): CommitResult {
  const start = input.expectedHeadId;
  if (start !== null && !chat.nodes.has(start)) throw new MessageNotFoundError(chat.id, start);
  const name = forkBranchName(fork.from, chat.branches.keys());
  const now = timeAfter(chat.updatedAt);
  const branch: BranchState = { name, headMessageId: start, createdAt: now, updatedAt: now };
  const messages = withVersionIds(chat, input.messages);
  assertOnBranch(chat, branch, messages);
  chat.branches.set(name, branch);
  if (fork.activate) chat.activeBranch = name;
  return { ...write(chat, branch, messages), branch: name };
}

/**
 * The messages with a node id for each new version (`newVersion`), allocated in the same
 * synchronous step as the write, so no other caller can take it in between: the newest node of
 * the message from the index, then the first candidate id the chat does not have.
 */
function withVersionIds(
  chat: ChatState,
  messages: readonly PreparedCommitMessage[],
): readonly PreparedCommitMessage[] {
  return assignVersionIds(messages, {
    newestNodeOf: (messageId) => chat.byMessageId.get(messageId)?.at(-1)?.id ?? null,
    hasNode: (nodeId) => chat.nodes.has(nodeId),
  });
}

/** Checks that every existing id is on the branch, then writes; nothing is written on a refusal. */
function write(
  chat: ChatState,
  branch: BranchState,
  messages: readonly PreparedCommitMessage[],
): CommitResult {
  assertOnBranch(chat, branch, messages);
  // Nothing below can throw: every check is done, so the write is all-or-nothing.
  const now = timeAfter(chat.updatedAt);
  const revision = chat.revision + 1;
  let head = branch.headMessageId;
  let replaced = false;
  const written: NodeState[] = [];
  for (const message of messages) {
    const existing = chat.nodes.get(message.id);
    if (existing !== undefined) {
      if (existing.messageId !== message.messageId) {
        unindexNode(chat, existing);
        existing.messageId = message.messageId;
        indexNode(chat, existing);
      }
      existing.json = message.json;
      // A replaced node keeps its record unless a new one is given.
      if (message.engineRecordJson !== null) existing.engineRecordJson = message.engineRecordJson;
      existing.updatedAt = now;
      replaced = true;
      written.push(existing);
      continue;
    }
    const node: NodeState = {
      id: message.id,
      messageId: message.messageId,
      parentId: head,
      sequence: chat.nextSequence,
      json: message.json,
      engineRecordJson: message.engineRecordJson,
      createdAt: now,
      updatedAt: now,
    };
    chat.nextSequence += 1;
    chat.nodes.set(node.id, node);
    indexNode(chat, node);
    head = node.id;
    written.push(node);
  }
  if (head !== branch.headMessageId) {
    branch.headMessageId = head;
    branch.updatedAt = now;
  }
  chat.revision = revision;
  if (replaced) chat.rewrittenAt = revision;
  chat.updatedAt = now;
  return {
    headMessageId: head,
    revision,
    rewrittenAt: chat.rewrittenAt,
    nodes: written.map((node) => nodeRecord(chat.id, node)),
  };
}

/**
 * A message whose id exists in the chat may only replace a node on the branch (the head or an
 * ancestor): walks parent pointers from the head until every such id is found, or throws
 * `MessageIdConflictError` for the first one (in batch order) that is not. O(1) when the batch
 * holds only new ids.
 */
function assertOnBranch(
  chat: ChatState,
  branch: BranchState,
  messages: readonly PreparedCommitMessage[],
): void {
  const missing = new Set<string>();
  for (const message of messages) if (chat.nodes.has(message.id)) missing.add(message.id);
  let current = branch.headMessageId;
  while (missing.size > 0 && current !== null) {
    missing.delete(current);
    current = chat.nodes.get(current)?.parentId ?? null;
  }
  const offBranch = messages.find((message) => missing.has(message.id));
  if (offBranch !== undefined) {
    throw new MessageIdConflictError({
      chatId: chat.id,
      branch: branch.name,
      messageId: offBranch.id,
    });
  }
}
