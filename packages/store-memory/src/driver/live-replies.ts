import {
  type ChatChange,
  type CommitResult,
  type JsonObject,
  LiveReplyConflictError,
  LiveReplyLostError,
  LiveReplyOffsetError,
  type LiveReplyRead,
  type LiveReplyRecord,
} from '@ctxgraph/fragments-core';
import {
  ChatWatchers,
  type ContextStoreDriver,
  chunksFrom,
  type LiveReplyDriver,
  type PreparedCommit,
  type StoredChunkBatch,
} from '@ctxgraph/fragments-core/store-kit';
import { type ChatState, type MemoryChats, requireChat } from './memory-state';

// Live replies and the change feed of the memory store (capabilities.liveReplies). Each operation
// reads and writes in one synchronous stretch, like the other operations, so it is atomic for
// interleaved async callers. A chat's live state hangs off its ChatState object: it goes with the
// chat, and a chat created again under the same id starts with none.

/** One live reply. */
interface ReplyState {
  readonly replyId: string;
  readonly branch: string | null;
  readonly afterNodeId: string | null;
  owner: string;
  leaseExpiresAt: number;
  stopRequestedAt: number | null;
  chunkCount: number;
  readonly startedAt: number;
  readonly dataJson: string;
  /** Appended batches, each one JSON array, in offset order. */
  readonly batches: StoredChunkBatch[];
}

/** A chat's live replies: insertion order is start order (an ended reply is deleted). */
interface LiveChat {
  /** Live-reply writes that were not commits: a start, a stop, a takeover, an end. */
  revision: number;
  readonly replies: Map<string, ReplyState>;
}

function record(chatId: string, reply: ReplyState): LiveReplyRecord {
  return {
    chatId,
    replyId: reply.replyId,
    branch: reply.branch,
    afterNodeId: reply.afterNodeId,
    owner: reply.owner,
    leaseExpiresAt: reply.leaseExpiresAt,
    stopRequestedAt: reply.stopRequestedAt,
    chunkCount: reply.chunkCount,
    startedAt: reply.startedAt,
    data: JSON.parse(reply.dataJson) as JsonObject,
  };
}

function read(chatId: string, reply: ReplyState, from: number): LiveReplyRead {
  return { record: record(chatId, reply), chunks: chunksFrom(reply.batches, from) };
}

/** The driver methods that write a chat: each is followed by a `'chat'` notice to its watchers. */
const WRITES = [
  'openChat',
  'updateChat',
  'deleteChat',
  'commit',
  'append',
  'createBranch',
  'forkBranch',
  'renameBranch',
  'setActiveBranch',
  'createCheckpoint',
  'deleteCheckpoint',
  'saveContext',
  'prune',
] as const;

/** The live-reply operations of the memory driver, and what they add to its other operations. */
export interface LiveReplyOperations {
  /** The methods of `capabilities.liveReplies`. */
  readonly methods: Required<LiveReplyDriver>;
  /**
   * The driver's writes, each followed by a notice to the chat's watchers, and its commit taking
   * `startReply` / `endReply` in the same synchronous stretch.
   */
  readonly wrap: (driver: ContextStoreDriver) => ContextStoreDriver;
  /** Stops the feed (the store closes). */
  readonly close: () => void;
}

/** Live replies over `chats`, stamped with `clock`. */
export function liveReplyOperations(chats: MemoryChats, clock: () => number): LiveReplyOperations {
  const lives = new WeakMap<ChatState, LiveChat>();
  const liveOf = (chat: ChatState): LiveChat => {
    let live = lives.get(chat);
    if (live === undefined) {
      live = { revision: 0, replies: new Map() };
      lives.set(chat, live);
    }
    return live;
  };
  const watchers = new ChatWatchers({
    start() {},
    stop() {},
    // Writes are announced as they happen: the first notice only needs to come after `watch`.
    added(chatId) {
      void Promise.resolve().then(() => watchers.emit({ type: 'chat', chatId }));
    },
  });
  const notify = (change: ChatChange): void => watchers.emit(change);
  const held = (chat: ChatState, replyId: string, owner: string): ReplyState => {
    const reply = liveOf(chat).replies.get(replyId);
    if (reply === undefined || reply.owner !== owner) {
      throw new LiveReplyLostError({
        chatId: chat.id,
        replyId,
        owner,
        currentOwner: reply?.owner ?? null,
      });
    }
    return reply;
  };
  const insert = (
    chat: ChatState,
    input: {
      readonly replyId: string;
      readonly branch: string | null;
      readonly afterNodeId: string | null;
      readonly owner: string;
      readonly leaseMs: number;
      readonly dataJson: string;
    },
  ): ReplyState => {
    const now = clock();
    const reply: ReplyState = {
      replyId: input.replyId,
      branch: input.branch,
      afterNodeId: input.afterNodeId,
      owner: input.owner,
      leaseExpiresAt: now + input.leaseMs,
      stopRequestedAt: null,
      chunkCount: 0,
      startedAt: now,
      dataJson: input.dataJson,
      batches: [],
    };
    liveOf(chat).replies.set(reply.replyId, reply);
    return reply;
  };
  const assertFree = (chat: ChatState, replyId: string): void => {
    if (liveOf(chat).replies.has(replyId))
      throw new LiveReplyConflictError({ chatId: chat.id, replyId });
  };

  const methods: Required<LiveReplyDriver> = {
    startReply(input) {
      const chat = requireChat(chats, input.chatId);
      assertFree(chat, input.replyId);
      const reply = insert(chat, input);
      liveOf(chat).revision += 1;
      notify({ type: 'chat', chatId: chat.id });
      return record(chat.id, reply);
    },

    appendReplyChunks(input) {
      const chat = requireChat(chats, input.chatId);
      const reply = held(chat, input.replyId, input.owner);
      if (input.from !== reply.chunkCount) {
        throw new LiveReplyOffsetError({
          chatId: chat.id,
          replyId: input.replyId,
          from: input.from,
          chunkCount: reply.chunkCount,
        });
      }
      if (input.count > 0) {
        reply.batches.push({ seq: reply.chunkCount, count: input.count, json: input.chunksJson });
        reply.chunkCount += input.count;
      }
      reply.leaseExpiresAt = clock() + input.leaseMs;
      if (input.count > 0) {
        notify({
          type: 'chunks',
          chatId: chat.id,
          replyId: reply.replyId,
          chunkCount: reply.chunkCount,
        });
      }
      return {
        chunkCount: reply.chunkCount,
        leaseExpiresAt: reply.leaseExpiresAt,
        stopRequested: reply.stopRequestedAt !== null,
      };
    },

    readReply(input) {
      const chat = requireChat(chats, input.chatId);
      const reply = liveOf(chat).replies.get(input.replyId);
      return reply === undefined ? null : read(chat.id, reply, input.from);
    },

    getLiveState(chatId) {
      const chat = requireChat(chats, chatId);
      const live = liveOf(chat);
      return {
        chatId,
        changeVersion: chat.version + live.revision,
        replies: [...live.replies.values()].map((reply) => record(chatId, reply)),
      };
    },

    stopReply(input) {
      const chat = requireChat(chats, input.chatId);
      const live = liveOf(chat);
      const replies =
        input.replyId === undefined
          ? [...live.replies.values()]
          : [live.replies.get(input.replyId)].filter((reply) => reply !== undefined);
      const now = clock();
      let marked = false;
      for (const reply of replies) {
        if (reply.stopRequestedAt !== null) continue;
        reply.stopRequestedAt = now;
        marked = true;
      }
      if (marked) {
        live.revision += 1;
        notify({ type: 'chat', chatId: chat.id });
      }
      return replies.map((reply) => record(chat.id, reply));
    },

    takeOverReply(input) {
      const chat = requireChat(chats, input.chatId);
      const live = liveOf(chat);
      const reply = live.replies.get(input.replyId);
      const now = clock();
      if (reply === undefined || reply.leaseExpiresAt > now) return null;
      reply.owner = input.owner;
      reply.leaseExpiresAt = now + input.leaseMs;
      live.revision += 1;
      notify({ type: 'chat', chatId: chat.id });
      return read(chat.id, reply, 0);
    },

    endReply(input) {
      const chat = requireChat(chats, input.chatId);
      held(chat, input.replyId, input.owner);
      const live = liveOf(chat);
      live.replies.delete(input.replyId);
      live.revision += 1;
      notify({ type: 'chat', chatId: chat.id });
    },

    watchChat(chatId, listener) {
      return watchers.watch(chatId, listener);
    },
  };

  // The commit and its live reply in one synchronous stretch: the live check first (nothing is
  // written when it fails), then the commit (which writes nothing when it fails), then the
  // record, which cannot fail.
  const withLive =
    (commit: ContextStoreDriver['commit']) =>
    (input: PreparedCommit): CommitResult => {
      const { startReply, endReply } = input;
      if (startReply === undefined && endReply === undefined) return commit(input) as CommitResult;
      const chat = requireChat(chats, input.chatId);
      if (endReply !== undefined) held(chat, endReply.replyId, endReply.owner);
      if (startReply !== undefined) assertFree(chat, startReply.replyId);
      const result = commit(input) as CommitResult;
      if (startReply !== undefined) {
        insert(chat, {
          ...startReply,
          branch: result.branch ?? input.branch,
          afterNodeId: result.headMessageId,
        });
      }
      if (endReply !== undefined) liveOf(chat).replies.delete(endReply.replyId);
      return result;
    };

  const wrap = (driver: ContextStoreDriver): ContextStoreDriver => {
    const wrapped: Record<string, unknown> = { ...driver, ...methods };
    const commit = withLive(driver.commit.bind(driver));
    wrapped.commit = commit;
    for (const name of WRITES) {
      const write = name === 'commit' ? commit : driver[name];
      if (typeof write !== 'function') continue;
      wrapped[name] = (input: unknown) => {
        const result = (write as (input: unknown) => unknown).call(driver, input);
        const chatId =
          typeof input === 'string' ? input : (input as { readonly chatId: string }).chatId;
        notify({ type: 'chat', chatId });
        return result;
      };
    }
    return wrapped as unknown as ContextStoreDriver;
  };

  return { methods, wrap, close: () => watchers.close() };
}
