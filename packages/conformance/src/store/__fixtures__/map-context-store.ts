import {
  BranchExistsError,
  BranchNotFoundError,
  type BranchRecord,
  ChatNotFoundError,
  type ChatRecord,
  CheckpointExistsError,
  type CheckpointRecord,
  ContextConflictError,
  HeadConflictError,
  type JsonObject,
  MessageIdConflictError,
  type MessageNodeRecord,
  MessageNotFoundError,
  OwnershipError,
} from '@ctxgraph/fragments-core';
import {
  assignVersionIds,
  type CheckedContextStore,
  defineContextStore,
  forkBranchName,
  mergeMetadata,
} from '@ctxgraph/fragments-core/store-kit';

// What one chat holds. Messages, engine records, metadata and the context lane stay JSON text, so
// every read parses a fresh copy and no caller can reach the stored one. Swap these maps for your
// database's tables.
type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type StoredNode = Mutable<Omit<MessageNodeRecord, 'message' | 'engineRecord'>> & {
  messageId: string; // the message's own id: the node id, or not for a later version
  json: string;
  engineRecordJson: string | null;
};
interface StoredChat {
  chat: Mutable<Omit<ChatRecord, 'metadata'>>;
  metadataJson: string;
  nodes: Map<string, StoredNode>;
  versions: Map<string, string[]>; // message id → its node ids, oldest first: the index
  branches: Map<string, Mutable<BranchRecord>>;
  checkpoints: Map<string, CheckpointRecord>;
  lane: { fragmentsJson: string; revision: number; updatedAt: number } | null;
}

/** A complete v1 ContextStore over a Map: storage only; the kit does checks, close() and errors. */
export function createMapContextStore(): CheckedContextStore {
  const chats = new Map<string, StoredChat>();

  const find = (chatId: string): StoredChat => {
    const stored = chats.get(chatId);
    if (stored === undefined) throw new ChatNotFoundError(chatId);
    return stored;
  };
  const branchOf = (stored: StoredChat, name: string): Mutable<BranchRecord> => {
    const branch = stored.branches.get(name);
    if (branch === undefined) throw new BranchNotFoundError(stored.chat.id, name);
    return branch;
  };
  const chatRecord = (stored: StoredChat): ChatRecord => ({
    ...stored.chat,
    metadata: JSON.parse(stored.metadataJson) as JsonObject,
  });
  const nodeRecord = (node: StoredNode): MessageNodeRecord => {
    const { messageId: _messageId, json, engineRecordJson, ...rest } = node;
    const engineRecord = engineRecordJson === null ? null : JSON.parse(engineRecordJson);
    return { ...rest, message: JSON.parse(json), engineRecord };
  };
  const index = (stored: StoredChat, node: StoredNode): void => {
    const ids = stored.versions.get(node.messageId) ?? [];
    ids.push(node.id);
    ids.sort((a, b) => (stored.nodes.get(a)?.sequence ?? 0) - (stored.nodes.get(b)?.sequence ?? 0));
    stored.versions.set(node.messageId, ids);
  };
  const unindex = (stored: StoredChat, node: StoredNode): void => {
    const ids = stored.versions.get(node.messageId) ?? [];
    stored.versions.set(
      node.messageId,
      ids.filter((id) => id !== node.id),
    );
  };
  // Every write moves the chat's updatedAt, never backwards.
  const touch = (stored: StoredChat): number => {
    stored.chat.updatedAt = Math.max(Date.now(), stored.chat.updatedAt);
    return stored.chat.updatedAt;
  };

  // Each method reads and writes without an `await` in between: that is this store's transaction.
  // It has no `append` or `forkBranch`: the kit makes them from `commit` and `createBranch`.
  return defineContextStore({
    name: 'MapContextStore',
    capabilities: { persistent: false, multiProcess: false },

    openChat({ chatId, userId, title, metadata, metadataJson }) {
      const existing = chats.get(chatId);
      if (existing !== undefined) {
        if (existing.chat.userId !== userId) throw new OwnershipError(chatId, userId);
        if (metadata !== undefined) {
          const current = JSON.parse(existing.metadataJson) as JsonObject;
          existing.metadataJson = JSON.stringify(mergeMetadata(current, metadata));
          touch(existing);
        }
        const branch = branchOf(existing, existing.chat.activeBranch);
        return { chat: chatRecord(existing), branch: { ...branch }, created: false };
      }
      const now = Date.now();
      const main = { chatId, name: 'main', headMessageId: null, createdAt: now, updatedAt: now };
      const stored: StoredChat = {
        chat: {
          id: chatId,
          userId,
          title,
          activeBranch: 'main',
          revision: 0,
          rewrittenAt: 0,
          createdAt: now,
          updatedAt: now,
        },
        metadataJson,
        nodes: new Map(),
        versions: new Map(),
        branches: new Map([['main', main]]),
        checkpoints: new Map(),
        lane: null,
      };
      chats.set(chatId, stored);
      return { chat: chatRecord(stored), branch: { ...main }, created: true };
    },

    getChat(chatId) {
      const stored = chats.get(chatId);
      return stored === undefined ? null : chatRecord(stored);
    },

    updateChat({ chatId, title, metadata }) {
      const stored = find(chatId);
      if (title !== undefined) stored.chat.title = title;
      if (metadata !== undefined) {
        const current = JSON.parse(stored.metadataJson) as JsonObject;
        stored.metadataJson = JSON.stringify(mergeMetadata(current, metadata));
      }
      touch(stored);
      return chatRecord(stored);
    },

    // One more than a page: the kit cuts the page and makes the cursor.
    listChats({ userId, limit, after }) {
      return [...chats.values()]
        .map(chatRecord)
        .filter(
          (chat) =>
            chat.userId === userId &&
            (after === null ||
              chat.updatedAt < after.updatedAt ||
              (chat.updatedAt === after.updatedAt && chat.id > after.id)),
        )
        .sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .slice(0, limit + 1);
    },

    deleteChat(chatId) {
      return chats.delete(chatId);
    },

    getHead({ chatId, branch }) {
      const stored = find(chatId);
      const { headMessageId } = branchOf(stored, branch);
      return {
        revision: stored.chat.revision,
        rewrittenAt: stored.chat.rewrittenAt,
        headMessageId,
      };
    },

    commit({ chatId, branch, expectedHeadId, messages, fork }) {
      const stored = find(chatId);
      // A fork-commit writes on a branch it creates at the expected head; a plain commit checks
      // that the branch is still where the caller saw it.
      let pointer: Mutable<BranchRecord>;
      if (fork === undefined) {
        pointer = branchOf(stored, branch);
        const currentHeadId = pointer.headMessageId;
        if (currentHeadId !== expectedHeadId)
          throw new HeadConflictError({ chatId, branch, expectedHeadId, currentHeadId });
      } else {
        if (expectedHeadId !== null && !stored.nodes.has(expectedHeadId))
          throw new MessageNotFoundError(chatId, expectedHeadId);
        const name = forkBranchName(fork.from, stored.branches.keys());
        pointer = { chatId, name, headMessageId: expectedHeadId, createdAt: 0, updatedAt: 0 };
      }
      // New versions of a message get their node ids here, inside the write.
      const entries = assignVersionIds(messages, {
        newestNodeOf: (messageId) => stored.versions.get(messageId)?.at(-1) ?? null,
        hasNode: (nodeId) => stored.nodes.has(nodeId),
      });
      // An id already in the chat may only replace a node this branch shows.
      if (entries.some((entry) => stored.nodes.has(entry.id))) {
        const onBranch = new Set<string>();
        for (
          let id = pointer.headMessageId;
          id !== null;
          id = stored.nodes.get(id)?.parentId ?? null
        )
          onBranch.add(id);
        const offBranch = entries.find(({ id }) => stored.nodes.has(id) && !onBranch.has(id));
        if (offBranch !== undefined)
          throw new MessageIdConflictError({
            chatId,
            branch: pointer.name,
            messageId: offBranch.id,
          });
      }
      // Every check is done: from here on, nothing throws.
      const now = touch(stored);
      const revision = stored.chat.revision + 1;
      stored.chat.revision = revision;
      if (fork !== undefined) {
        Object.assign(pointer, { createdAt: now, updatedAt: now });
        stored.branches.set(pointer.name, pointer);
        if (fork.activate) stored.chat.activeBranch = pointer.name;
      }
      let head = pointer.headMessageId;
      const written: StoredNode[] = [];
      for (const { id, messageId, json, engineRecordJson } of entries) {
        const existing = stored.nodes.get(id);
        if (existing !== undefined) {
          unindex(stored, existing);
          existing.messageId = messageId;
          index(stored, existing);
          existing.json = json;
          // A replaced node keeps its record unless the write gives one.
          if (engineRecordJson !== null) existing.engineRecordJson = engineRecordJson;
          existing.updatedAt = now;
          stored.chat.rewrittenAt = revision;
          written.push(existing);
          continue;
        }
        const sequence = stored.nodes.size + 1;
        const node: StoredNode = {
          ...{ chatId, id, messageId, parentId: head, sequence, json, engineRecordJson },
          ...{ createdAt: now, updatedAt: now },
        };
        stored.nodes.set(id, node);
        index(stored, node);
        head = id;
        written.push(node);
      }
      if (head !== pointer.headMessageId) {
        pointer.headMessageId = head;
        pointer.updatedAt = now;
      }
      const rewrittenAt = stored.chat.rewrittenAt;
      const nodes = written.map(nodeRecord);
      return { headMessageId: head, revision, rewrittenAt, nodes, branch: pointer.name };
    },

    getChain({ chatId, headMessageId, until, limit = Number.POSITIVE_INFINITY }) {
      const stored = find(chatId);
      if (!stored.nodes.has(headMessageId)) throw new MessageNotFoundError(chatId, headMessageId);
      const newestFirst: MessageNodeRecord[] = [];
      let id: string | null = headMessageId;
      while (id !== null && id !== until && newestFirst.length < limit) {
        const node = stored.nodes.get(id) as StoredNode;
        newestFirst.push(nodeRecord(node));
        id = node.parentId;
      }
      const reachedUntil = id !== null && id === until;
      return { nodes: newestFirst.reverse(), nextCursor: reachedUntil ? null : id, reachedUntil };
    },

    getMessage({ chatId, messageId }) {
      const node = find(chatId).nodes.get(messageId);
      return node === undefined ? null : nodeRecord(node);
    },

    // Through the index: the cost grows with the versions of one message, never with the chat.
    findMessageNodes({ chatId, messageId, limit }) {
      const stored = find(chatId);
      const ids = stored.versions.get(messageId) ?? [];
      return ids
        .slice(-limit)
        .reverse()
        .map((id) => nodeRecord(stored.nodes.get(id) as StoredNode));
    },

    createBranch({ chatId, name, headMessageId, activate }) {
      const stored = find(chatId);
      if (stored.branches.has(name)) throw new BranchExistsError(chatId, name);
      if (headMessageId !== null && !stored.nodes.has(headMessageId))
        throw new MessageNotFoundError(chatId, headMessageId);
      const now = touch(stored);
      const branch = { chatId, name, headMessageId, createdAt: now, updatedAt: now };
      stored.branches.set(name, branch);
      if (activate) stored.chat.activeBranch = name;
      return { ...branch };
    },

    renameBranch({ chatId, from, to }) {
      const stored = find(chatId);
      const branch = branchOf(stored, from);
      if (stored.branches.has(to)) throw new BranchExistsError(chatId, to);
      const now = touch(stored);
      Object.assign(branch, { name: to, updatedAt: now });
      // The branch keeps its place in the listing: rebuild the map in the same order.
      stored.branches = new Map(
        [...stored.branches.values()].map((entry): [string, Mutable<BranchRecord>] => [
          entry.name,
          entry,
        ]),
      );
      if (stored.chat.activeBranch === from) stored.chat.activeBranch = to;
      return { ...branch };
    },

    getBranch({ chatId, name }) {
      const branch = find(chatId).branches.get(name);
      return branch === undefined ? null : { ...branch };
    },

    listBranches(chatId) {
      return [...find(chatId).branches.values()].map((branch) => ({ ...branch }));
    },

    setActiveBranch({ chatId, name }) {
      const stored = find(chatId);
      const branch = branchOf(stored, name);
      stored.chat.activeBranch = name;
      touch(stored);
      return { ...branch };
    },

    createCheckpoint({ chatId, name, messageId, replace }) {
      const stored = find(chatId);
      if (!stored.nodes.has(messageId)) throw new MessageNotFoundError(chatId, messageId);
      if (stored.checkpoints.has(name) && !replace) throw new CheckpointExistsError(chatId, name);
      const checkpoint = { chatId, name, messageId, createdAt: touch(stored) };
      stored.checkpoints.delete(name); // a moved checkpoint lists as the newest
      stored.checkpoints.set(name, checkpoint);
      return { ...checkpoint };
    },

    getCheckpoint({ chatId, name }) {
      const checkpoint = find(chatId).checkpoints.get(name);
      return checkpoint === undefined ? null : { ...checkpoint };
    },

    listCheckpoints(chatId) {
      return [...find(chatId).checkpoints.values()].map((checkpoint) => ({ ...checkpoint }));
    },

    deleteCheckpoint({ chatId, name }) {
      const stored = find(chatId);
      const deleted = stored.checkpoints.delete(name);
      if (deleted) touch(stored);
      return deleted;
    },

    getContext(chatId) {
      const { lane } = find(chatId);
      if (lane === null) return { chatId, fragments: [], revision: 0, updatedAt: null };
      const { fragmentsJson, revision, updatedAt } = lane;
      return { chatId, fragments: JSON.parse(fragmentsJson), revision, updatedAt };
    },

    // The lane's revision counts its saves; the chat's revision counts message commits only.
    saveContext({ chatId, fragmentsJson, expectedRevision }) {
      const stored = find(chatId);
      const currentRevision = stored.lane?.revision ?? 0;
      if (expectedRevision !== undefined && expectedRevision !== currentRevision)
        throw new ContextConflictError({ chatId, expectedRevision, currentRevision });
      const revision = currentRevision + 1;
      const updatedAt = touch(stored);
      stored.lane = { fragmentsJson, revision, updatedAt };
      return { chatId, fragments: JSON.parse(fragmentsJson), revision, updatedAt };
    },

    getGraph(chatId) {
      const stored = find(chatId);
      return {
        chat: chatRecord(stored),
        nodes: [...stored.nodes.values()].map(nodeRecord),
        branches: [...stored.branches.values()].map((branch) => ({ ...branch })),
        checkpoints: [...stored.checkpoints.values()].map((checkpoint) => ({ ...checkpoint })),
      };
    },

    close() {
      chats.clear();
    },
  });
}
