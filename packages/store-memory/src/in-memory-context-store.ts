import {
  type AppendInput,
  type AppendResult,
  assertChainLimit,
  assertForkBranchInput,
  assertIdentifier,
  assertInputObject,
  assertJsonObject,
  assertOptionalBoolean,
  assertTitle,
  BranchExistsError,
  BranchNotFoundError,
  type BranchRecord,
  type ChainPage,
  type ChatGraph,
  ChatNotFoundError,
  type ChatPointerInput,
  type ChatRecord,
  CheckpointExistsError,
  type CheckpointRecord,
  type CommitInput,
  type CommitResult,
  type ContextStore,
  type ContextStoreCapabilities,
  type CreateBranchInput,
  type CreateCheckpointInput,
  chatCursor,
  type ForkBranchInput,
  type GetChainInput,
  type GetHeadInput,
  type GetMessageInput,
  HeadConflictError,
  type HeadState,
  type JsonObject,
  type ListChatsInput,
  MessageIdConflictError,
  type MessageNodeRecord,
  MessageNotFoundError,
  mergeMetadata,
  nextBranchName,
  type OpenChatInput,
  type OpenChatResult,
  OwnershipError,
  type Page,
  type PreparedCommitMessage,
  prepareAppend,
  prepareChatList,
  prepareCommit,
  type StoredMessage,
  StoreError,
  toJsonText,
  type UpdateChatInput,
  ValidationError,
} from '@ctxgraph/fragments-core';

// Everything the store keeps is plain data plus JSON text: message content and metadata are held
// as the JSON text the shared input checks produced, so a caller mutating what it passed in or
// what it got back can never reach the stored copy (every read parses a fresh object).

interface NodeState {
  readonly id: string;
  readonly parentId: string | null;
  readonly sequence: number;
  json: string;
  readonly createdAt: number;
  updatedAt: number;
}

interface BranchState {
  readonly name: string;
  headMessageId: string | null;
  readonly createdAt: number;
  updatedAt: number;
}

interface CheckpointState {
  readonly name: string;
  readonly messageId: string;
  readonly createdAt: number;
}

interface ChatState {
  readonly id: string;
  readonly userId: string;
  title: string | null;
  metadataJson: string;
  activeBranch: string;
  version: number;
  rewrittenAt: number;
  readonly createdAt: number;
  updatedAt: number;
  nextSequence: number;
  /** Insertion order is sequence order: a replace mutates a node, it is never re-inserted. */
  readonly nodes: Map<string, NodeState>;
  /** Insertion order is creation order (oldest first). */
  readonly branches: Map<string, BranchState>;
  /** Insertion order is creation order (oldest first); a replaced checkpoint moves to the end. */
  readonly checkpoints: Map<string, CheckpointState>;
}

const MAIN_BRANCH = 'main';

/**
 * A `ContextStore` that keeps every chat in memory: the reference implementation of the v1
 * contract, for tests, demos and apps that need no persistence. Data lives as long as the
 * object; two instances never share data.
 *
 * Every method does its checks and its write in one synchronous stretch (no `await` between
 * reading the head and moving it), so interleaved async callers get exactly the compare-and-set
 * semantics a database transaction gives.
 *
 * @example
 * ```ts
 * import { InMemoryContextStore } from '@ctxgraph/store-memory';
 *
 * const store = new InMemoryContextStore();
 * const { branch } = await store.openChat({ chatId: 'chat-1', userId: 'user-1' });
 * await store.commit({
 *   chatId: 'chat-1',
 *   branch: branch.name,
 *   expectedHeadId: branch.headMessageId,
 *   messages: [{ id: 'm1', message: { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Hi' }] } }],
 * });
 * ```
 */
export class InMemoryContextStore implements ContextStore {
  /** The contract version this store implements. */
  readonly specificationVersion: 'v1' = 'v1';
  /**
   * Data lives in this object only, and only this process can reach it. `append` and
   * `forkBranch` are served: each runs in one synchronous stretch, which serializes its callers.
   */
  readonly capabilities: ContextStoreCapabilities = Object.freeze({
    persistent: false,
    multiProcess: false,
    append: true,
    forkBranch: true,
  });

  readonly #chats = new Map<string, ChatState>();
  #closed = false;

  /** Creates the chat with an empty active `main` branch, or loads it. */
  async openChat(input: OpenChatInput): Promise<OpenChatResult> {
    const method = 'openChat(input)';
    this.#assertOpen(method);
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'userId', input.userId);
    if (input.metadata !== undefined) assertJsonObject(method, 'metadata', input.metadata);
    assertTitle(method, input.title, false);
    const existing = this.#chats.get(input.chatId);
    if (existing !== undefined) {
      if (existing.userId !== input.userId) throw new OwnershipError(input.chatId, input.userId);
      if (input.metadata !== undefined) {
        const current = JSON.parse(existing.metadataJson) as JsonObject;
        existing.metadataJson = toJsonText(
          method,
          'metadata',
          mergeMetadata(current, input.metadata),
        );
        existing.updatedAt = this.#now(existing.updatedAt);
      }
      const branch = existing.branches.get(existing.activeBranch);
      if (branch === undefined)
        throw new StoreError(`${method}: active branch of chat "${input.chatId}" is missing.`);
      return {
        chat: chatRecord(existing),
        branch: branchRecord(existing.id, branch),
        created: false,
      };
    }
    const now = Date.now();
    const metadataJson = toJsonText(method, 'metadata', input.metadata ?? {});
    const main: BranchState = {
      name: MAIN_BRANCH,
      headMessageId: null,
      createdAt: now,
      updatedAt: now,
    };
    const chat: ChatState = {
      id: input.chatId,
      userId: input.userId,
      title: input.title ?? null,
      metadataJson,
      activeBranch: MAIN_BRANCH,
      version: 0,
      rewrittenAt: 0,
      createdAt: now,
      updatedAt: now,
      nextSequence: 1,
      nodes: new Map(),
      branches: new Map([[MAIN_BRANCH, main]]),
      checkpoints: new Map(),
    };
    this.#chats.set(chat.id, chat);
    return { chat: chatRecord(chat), branch: branchRecord(chat.id, main), created: true };
  }

  /** The chat, or null. */
  async getChat(chatId: string): Promise<ChatRecord | null> {
    const method = 'getChat(chatId)';
    this.#assertOpen(method);
    assertIdentifier(method, 'chatId', chatId);
    const chat = this.#chats.get(chatId);
    return chat === undefined ? null : chatRecord(chat);
  }

  /** Sets the title and shallow-merges metadata. */
  async updateChat(input: UpdateChatInput): Promise<ChatRecord> {
    const method = 'updateChat(input)';
    this.#assertOpen(method);
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertTitle(method, input.title, true);
    if (input.metadata !== undefined) assertJsonObject(method, 'metadata', input.metadata);
    const chat = this.#chat(input.chatId);
    const metadataJson =
      input.metadata === undefined
        ? chat.metadataJson
        : toJsonText(
            method,
            'metadata',
            mergeMetadata(JSON.parse(chat.metadataJson) as JsonObject, input.metadata),
          );
    if (input.title !== undefined) chat.title = input.title;
    chat.metadataJson = metadataJson;
    chat.updatedAt = this.#now(chat.updatedAt);
    return chatRecord(chat);
  }

  /** A user's chats, most recently updated first, ties by id, by cursor. */
  async listChats(input: ListChatsInput): Promise<Page<ChatRecord>> {
    const method = 'listChats(input)';
    this.#assertOpen(method);
    assertInputObject(method, input);
    const query = prepareChatList(input);
    const after = query.after;
    const owned: ChatState[] = [];
    for (const chat of this.#chats.values()) {
      if (chat.userId !== query.userId) continue;
      if (
        after !== null &&
        !(
          chat.updatedAt < after.updatedAt ||
          (chat.updatedAt === after.updatedAt && chat.id > after.id)
        )
      ) {
        continue;
      }
      owned.push(chat);
    }
    owned.sort((left, right) => right.updatedAt - left.updatedAt || compareIds(left.id, right.id));
    const page = owned.slice(0, query.limit);
    const last = page.at(-1);
    return {
      items: page.map(chatRecord),
      nextCursor: owned.length > query.limit && last !== undefined ? chatCursor(last) : null,
    };
  }

  /** Deletes the chat with its nodes, branches and checkpoints. */
  async deleteChat(chatId: string): Promise<boolean> {
    const method = 'deleteChat(chatId)';
    this.#assertOpen(method);
    assertIdentifier(method, 'chatId', chatId);
    return this.#chats.delete(chatId);
  }

  /** The chat's version and one branch's head, in O(1). */
  async getHead(input: GetHeadInput): Promise<HeadState> {
    const method = 'getHead(input)';
    this.#assertOpen(method);
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'branch', input.branch);
    const chat = this.#chat(input.chatId);
    const branch = this.#branch(chat, input.branch);
    return {
      version: chat.version,
      headMessageId: branch.headMessageId,
      rewrittenAt: chat.rewrittenAt,
    };
  }

  /**
   * Inserts / replaces nodes and moves the head, or throws `HeadConflictError` (the head moved) or
   * `MessageIdConflictError` (an id of another branch) having written nothing.
   */
  async commit(input: CommitInput): Promise<CommitResult> {
    const method = 'commit(input)';
    this.#assertOpen(method);
    const prepared = prepareCommit(input);
    const chat = this.#chat(input.chatId);
    const branch = this.#branch(chat, input.branch);
    if (branch.headMessageId !== input.expectedHeadId) {
      throw new HeadConflictError({
        chatId: chat.id,
        branch: branch.name,
        expectedHeadId: input.expectedHeadId,
        currentHeadId: branch.headMessageId,
      });
    }
    return this.#write(chat, branch, prepared);
  }

  /**
   * The write of `commit`, attached at the head the branch has now. No `await` separates reading
   * the head from moving it, so concurrent appenders are serialized and none can fail for a moved
   * head; `MessageIdConflictError` for an id of another branch, having written nothing.
   */
  async append(input: AppendInput): Promise<AppendResult> {
    const method = 'append(input)';
    this.#assertOpen(method);
    const prepared = prepareAppend(input);
    const chat = this.#chat(input.chatId);
    const branch = this.#branch(chat, input.branch);
    const previousHeadId = branch.headMessageId;
    return { ...this.#write(chat, branch, prepared), previousHeadId };
  }

  /** Checks that every existing id is on the branch, then writes; nothing is written on a refusal. */
  #write(chat: ChatState, branch: BranchState, prepared: PreparedCommitMessage[]): CommitResult {
    this.#assertOnBranch(chat, branch, prepared);
    // Nothing below can throw: every check is done, so the write is all-or-nothing.
    const now = this.#now(chat.updatedAt);
    const version = chat.version + 1;
    let head = branch.headMessageId;
    let replaced = false;
    const written: NodeState[] = [];
    for (const message of prepared) {
      const existing = chat.nodes.get(message.id);
      if (existing !== undefined) {
        existing.json = message.json;
        existing.updatedAt = now;
        replaced = true;
        written.push(existing);
        continue;
      }
      const node: NodeState = {
        id: message.id,
        parentId: head,
        sequence: chat.nextSequence,
        json: message.json,
        createdAt: now,
        updatedAt: now,
      };
      chat.nextSequence += 1;
      chat.nodes.set(node.id, node);
      head = node.id;
      written.push(node);
    }
    if (head !== branch.headMessageId) {
      branch.headMessageId = head;
      branch.updatedAt = now;
    }
    chat.version = version;
    if (replaced) chat.rewrittenAt = version;
    chat.updatedAt = now;
    return {
      headMessageId: head,
      version,
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
  #assertOnBranch(chat: ChatState, branch: BranchState, prepared: PreparedCommitMessage[]): void {
    const missing = new Set<string>();
    for (const message of prepared) if (chat.nodes.has(message.id)) missing.add(message.id);
    let current = branch.headMessageId;
    while (missing.size > 0 && current !== null) {
      missing.delete(current);
      current = chat.nodes.get(current)?.parentId ?? null;
    }
    const offBranch = prepared.find((message) => missing.has(message.id));
    if (offBranch !== undefined) {
      throw new MessageIdConflictError({
        chatId: chat.id,
        branch: branch.name,
        messageId: offBranch.id,
      });
    }
  }

  /** Walks from a node back toward the root: O(nodes returned). */
  async getChain(input: GetChainInput): Promise<ChainPage> {
    const method = 'getChain(input)';
    this.#assertOpen(method);
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'headMessageId', input.headMessageId);
    if (input.until !== undefined) assertIdentifier(method, 'until', input.until);
    assertChainLimit(input.limit);
    const chat = this.#chat(input.chatId);
    if (!chat.nodes.has(input.headMessageId))
      throw new MessageNotFoundError(chat.id, input.headMessageId);
    const limit = input.limit ?? Number.POSITIVE_INFINITY;
    const newestFirst: MessageNodeRecord[] = [];
    let current: string | null = input.headMessageId;
    while (current !== null && current !== input.until && newestFirst.length < limit) {
      const node = chat.nodes.get(current);
      // A parent always exists: nodes are only removed with their whole chat.
      if (node === undefined)
        throw new StoreError(`${method}: node "${current}" of chat "${chat.id}" is missing.`);
      newestFirst.push(nodeRecord(chat.id, node));
      current = node.parentId;
    }
    const reachedUntil = current !== null && current === input.until;
    return {
      nodes: newestFirst.reverse(),
      nextCursor: current === null || reachedUntil ? null : current,
      reachedUntil,
    };
  }

  /** One node, or null. */
  async getMessage(input: GetMessageInput): Promise<MessageNodeRecord | null> {
    const method = 'getMessage(input)';
    this.#assertOpen(method);
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'messageId', input.messageId);
    const chat = this.#chat(input.chatId);
    const node = chat.nodes.get(input.messageId);
    return node === undefined ? null : nodeRecord(chat.id, node);
  }

  /** Creates a branch, optionally making it active in the same write. */
  async createBranch(input: CreateBranchInput): Promise<BranchRecord> {
    const method = 'createBranch(input)';
    this.#assertOpen(method);
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'name', input.name);
    if (input.headMessageId !== null)
      assertIdentifier(method, 'headMessageId', input.headMessageId);
    assertOptionalBoolean(method, 'activate', input.activate);
    const chat = this.#chat(input.chatId);
    if (chat.branches.has(input.name)) throw new BranchExistsError(chat.id, input.name);
    if (input.headMessageId !== null && !chat.nodes.has(input.headMessageId)) {
      throw new MessageNotFoundError(chat.id, input.headMessageId);
    }
    const now = this.#now(chat.updatedAt);
    const branch: BranchState = {
      name: input.name,
      headMessageId: input.headMessageId,
      createdAt: now,
      updatedAt: now,
    };
    chat.branches.set(branch.name, branch);
    if (input.activate === true) chat.activeBranch = branch.name;
    chat.updatedAt = now;
    return branchRecord(chat.id, branch);
  }

  /**
   * Creates a branch named `nextBranchName(from, every branch name of the chat)` in the same
   * synchronous stretch that reads the names, so concurrent forks never pick the same name.
   */
  async forkBranch(input: ForkBranchInput): Promise<BranchRecord> {
    const method = 'forkBranch(input)';
    this.#assertOpen(method);
    assertForkBranchInput(input);
    const chat = this.#chat(input.chatId);
    if (input.headMessageId !== null && !chat.nodes.has(input.headMessageId)) {
      throw new MessageNotFoundError(chat.id, input.headMessageId);
    }
    const name = nextBranchName(input.from, chat.branches.keys());
    try {
      assertIdentifier(method, 'from', name);
    } catch (error) {
      // A `from` near the length limit has no valid next name (its `-vN` suffix does not fit).
      throw new ValidationError(
        `${method}: the next fork of "${input.from}" would be named "${name}", which is not a valid branch name (${(error as Error).message}). Nothing was created; fork from a shorter name or use createBranch with a name of your own.`,
        {
          issues: [{ path: 'from', message: 'the derived branch name is not a valid identifier' }],
        },
      );
    }
    const now = this.#now(chat.updatedAt);
    const branch: BranchState = {
      name,
      headMessageId: input.headMessageId,
      createdAt: now,
      updatedAt: now,
    };
    chat.branches.set(branch.name, branch);
    if (input.activate === true) chat.activeBranch = branch.name;
    chat.updatedAt = now;
    return branchRecord(chat.id, branch);
  }

  /** A branch, or null. */
  async getBranch(input: ChatPointerInput): Promise<BranchRecord | null> {
    const method = 'getBranch(input)';
    this.#assertPointerInput(method, input);
    const chat = this.#chat(input.chatId);
    const branch = chat.branches.get(input.name);
    return branch === undefined ? null : branchRecord(chat.id, branch);
  }

  /** Every branch of the chat, oldest first. */
  async listBranches(chatId: string): Promise<BranchRecord[]> {
    const method = 'listBranches(chatId)';
    this.#assertOpen(method);
    assertIdentifier(method, 'chatId', chatId);
    const chat = this.#chat(chatId);
    return [...chat.branches.values()].map((branch) => branchRecord(chat.id, branch));
  }

  /** Makes an existing branch the active one. */
  async setActiveBranch(input: ChatPointerInput): Promise<BranchRecord> {
    const method = 'setActiveBranch(input)';
    this.#assertPointerInput(method, input);
    const chat = this.#chat(input.chatId);
    const branch = this.#branch(chat, input.name);
    chat.activeBranch = branch.name;
    chat.updatedAt = this.#now(chat.updatedAt);
    return branchRecord(chat.id, branch);
  }

  /** Names a node; `replace` moves an existing checkpoint of that name. */
  async createCheckpoint(input: CreateCheckpointInput): Promise<CheckpointRecord> {
    const method = 'createCheckpoint(input)';
    this.#assertOpen(method);
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'name', input.name);
    assertIdentifier(method, 'messageId', input.messageId);
    assertOptionalBoolean(method, 'replace', input.replace);
    const chat = this.#chat(input.chatId);
    if (!chat.nodes.has(input.messageId)) throw new MessageNotFoundError(chat.id, input.messageId);
    if (chat.checkpoints.has(input.name) && input.replace !== true) {
      throw new CheckpointExistsError(chat.id, input.name);
    }
    const now = this.#now(chat.updatedAt);
    const checkpoint: CheckpointState = {
      name: input.name,
      messageId: input.messageId,
      createdAt: now,
    };
    // A moved checkpoint is a new one under an old name: it lists where a new one would.
    chat.checkpoints.delete(input.name);
    chat.checkpoints.set(checkpoint.name, checkpoint);
    chat.updatedAt = now;
    return checkpointRecord(chat.id, checkpoint);
  }

  /** A checkpoint, or null. */
  async getCheckpoint(input: ChatPointerInput): Promise<CheckpointRecord | null> {
    const method = 'getCheckpoint(input)';
    this.#assertPointerInput(method, input);
    const chat = this.#chat(input.chatId);
    const checkpoint = chat.checkpoints.get(input.name);
    return checkpoint === undefined ? null : checkpointRecord(chat.id, checkpoint);
  }

  /** Every checkpoint of the chat, oldest first. */
  async listCheckpoints(chatId: string): Promise<CheckpointRecord[]> {
    const method = 'listCheckpoints(chatId)';
    this.#assertOpen(method);
    assertIdentifier(method, 'chatId', chatId);
    const chat = this.#chat(chatId);
    return [...chat.checkpoints.values()].map((checkpoint) =>
      checkpointRecord(chat.id, checkpoint),
    );
  }

  /** Deletes a checkpoint (never its node). */
  async deleteCheckpoint(input: ChatPointerInput): Promise<boolean> {
    const method = 'deleteCheckpoint(input)';
    this.#assertPointerInput(method, input);
    const chat = this.#chat(input.chatId);
    if (!chat.checkpoints.delete(input.name)) return false;
    chat.updatedAt = this.#now(chat.updatedAt);
    return true;
  }

  /** The whole graph of a chat. */
  async getGraph(chatId: string): Promise<ChatGraph> {
    const method = 'getGraph(chatId)';
    this.#assertOpen(method);
    assertIdentifier(method, 'chatId', chatId);
    const chat = this.#chat(chatId);
    return {
      chat: chatRecord(chat),
      nodes: [...chat.nodes.values()].map((node) => nodeRecord(chat.id, node)),
      branches: [...chat.branches.values()].map((branch) => branchRecord(chat.id, branch)),
      checkpoints: [...chat.checkpoints.values()].map((checkpoint) =>
        checkpointRecord(chat.id, checkpoint),
      ),
    };
  }

  /** Drops every chat. Safe to call twice; later calls fail with `StoreError`. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#chats.clear();
  }

  /** Same as {@link InMemoryContextStore.close}, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Never serializes the data. */
  toJSON(): string {
    return '[InMemoryContextStore]';
  }

  #assertOpen(method: string): void {
    if (this.#closed) throw new StoreError(`${method}: this InMemoryContextStore is closed.`);
  }

  #assertPointerInput(method: string, input: ChatPointerInput): void {
    this.#assertOpen(method);
    assertInputObject(method, input);
    assertIdentifier(method, 'chatId', input.chatId);
    assertIdentifier(method, 'name', input.name);
  }

  #chat(chatId: string): ChatState {
    const chat = this.#chats.get(chatId);
    if (chat === undefined) throw new ChatNotFoundError(chatId);
    return chat;
  }

  #branch(chat: ChatState, name: string): BranchState {
    const branch = chat.branches.get(name);
    if (branch === undefined) throw new BranchNotFoundError(chat.id, name);
    return branch;
  }

  /** Now, but never before `previous`: `updatedAt` must not go back if the clock does. */
  #now(previous: number): number {
    return Math.max(Date.now(), previous);
  }
}

/** Code-unit order, the same order `prepareChatList` cursors compare with. */
function compareIds(left: string, right: string): number {
  if (left === right) return 0;
  return left < right ? -1 : 1;
}

function chatRecord(chat: ChatState): ChatRecord {
  return {
    id: chat.id,
    userId: chat.userId,
    title: chat.title,
    metadata: JSON.parse(chat.metadataJson) as JsonObject,
    activeBranch: chat.activeBranch,
    version: chat.version,
    rewrittenAt: chat.rewrittenAt,
    createdAt: chat.createdAt,
    updatedAt: chat.updatedAt,
  };
}

function nodeRecord(chatId: string, node: NodeState): MessageNodeRecord {
  return {
    chatId,
    id: node.id,
    parentId: node.parentId,
    sequence: node.sequence,
    message: JSON.parse(node.json) as StoredMessage,
    createdAt: node.createdAt,
    updatedAt: node.updatedAt,
  };
}

function branchRecord(chatId: string, branch: BranchState): BranchRecord {
  return {
    chatId,
    name: branch.name,
    headMessageId: branch.headMessageId,
    createdAt: branch.createdAt,
    updatedAt: branch.updatedAt,
  };
}

function checkpointRecord(chatId: string, checkpoint: CheckpointState): CheckpointRecord {
  return {
    chatId,
    name: checkpoint.name,
    messageId: checkpoint.messageId,
    createdAt: checkpoint.createdAt,
  };
}
