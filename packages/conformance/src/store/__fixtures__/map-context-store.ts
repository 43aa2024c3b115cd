import {
  BranchExistsError,
  BranchNotFoundError,
  type BranchRecord,
  ChatNotFoundError,
  type ChatRecord,
  CheckpointExistsError,
  type CheckpointRecord,
  HeadConflictError,
  type JsonObject,
  MessageIdConflictError,
  type MessageNodeRecord,
  MessageNotFoundError,
  OwnershipError,
} from '@ctxgraph/fragments-core';
import {
  type CheckedContextStore,
  defineContextStore,
  mergeMetadata,
} from '@ctxgraph/fragments-core/store-kit';

// What one chat holds. Message content and metadata stay JSON text, so every read parses a fresh
// copy and no caller can reach the stored one. Swap these maps for your database's tables.
type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type StoredNode = Mutable<Omit<MessageNodeRecord, 'message'>> & { json: string };
interface StoredChat {
  chat: Mutable<Omit<ChatRecord, 'metadata'>>;
  metadataJson: string;
  nodes: Map<string, StoredNode>;
  branches: Map<string, Mutable<BranchRecord>>;
  checkpoints: Map<string, CheckpointRecord>;
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
  const nodeRecord = ({ json, ...node }: StoredNode): MessageNodeRecord => ({
    ...node,
    message: JSON.parse(json),
  });
  // Every write moves the chat's updatedAt, never backwards.
  const touch = (stored: StoredChat): number => {
    stored.chat.updatedAt = Math.max(Date.now(), stored.chat.updatedAt);
    return stored.chat.updatedAt;
  };

  // Each method reads and writes without an `await` in between: that is this store's transaction.
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
          version: 0,
          rewrittenAt: 0,
          createdAt: now,
          updatedAt: now,
        },
        metadataJson,
        nodes: new Map(),
        branches: new Map([['main', main]]),
        checkpoints: new Map(),
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
      return { version: stored.chat.version, rewrittenAt: stored.chat.rewrittenAt, headMessageId };
    },

    commit({ chatId, branch, expectedHeadId, messages }) {
      const stored = find(chatId);
      const pointer = branchOf(stored, branch);
      const currentHeadId = pointer.headMessageId;
      if (currentHeadId !== expectedHeadId) {
        throw new HeadConflictError({ chatId, branch, expectedHeadId, currentHeadId });
      }
      // An id already in the chat may only replace a node this branch shows.
      if (messages.some((message) => stored.nodes.has(message.id))) {
        const onBranch = new Set<string>();
        for (let id = currentHeadId; id !== null; id = stored.nodes.get(id)?.parentId ?? null)
          onBranch.add(id);
        const offBranch = messages.find(({ id }) => stored.nodes.has(id) && !onBranch.has(id));
        if (offBranch !== undefined)
          throw new MessageIdConflictError({ chatId, branch, messageId: offBranch.id });
      }
      const now = touch(stored);
      const version = stored.chat.version + 1;
      stored.chat.version = version;
      let head = currentHeadId;
      const written: StoredNode[] = [];
      for (const { id, json } of messages) {
        const existing = stored.nodes.get(id);
        if (existing !== undefined) {
          existing.json = json;
          existing.updatedAt = now;
          stored.chat.rewrittenAt = version;
          written.push(existing);
          continue;
        }
        const sequence = stored.nodes.size + 1;
        const node = { chatId, id, parentId: head, sequence, json, createdAt: now, updatedAt: now };
        stored.nodes.set(id, node);
        head = id;
        written.push(node);
      }
      if (head !== currentHeadId) {
        pointer.headMessageId = head;
        pointer.updatedAt = now;
      }
      const rewrittenAt = stored.chat.rewrittenAt;
      return { headMessageId: head, version, rewrittenAt, nodes: written.map(nodeRecord) };
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
