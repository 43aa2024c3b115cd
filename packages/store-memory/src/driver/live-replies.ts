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
// chat, and a chat created again under the same id starts with none. An ended reply stays (marked
// ended, readable) for the grace period, and is deleted by a later end once that is over.

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
  endedAt: number | null;
  readonly dataJson: string;
  /** Appended batches, each one JSON array, in offset order. */
  readonly batches: StoredChunkBatch[];
}

/**
 * A chat's replies, live and ended within the grace period: insertion order is start order (a
 * reply started again under an ended one's id is inserted anew).
 */
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
    endedAt: reply.endedAt,
    data: JSON.parse(reply.dataJson) as JsonObject,
  };
}

function read(chatId: string, reply: ReplyState, from: number, limit?: number): LiveReplyRead {
  return { record: record(chatId, reply), chunks: chunksFrom(reply.batches, from, limit) };
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

/**
 * Live replies over `chats`, stamped with `clock`; an ended reply stays readable for `graceMs`.
 */
export function liveReplyOperations(
  chats: MemoryChats,
  clock: () => number,
  graceMs: number,
): LiveReplyOperations {
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
  /** The chat's reply when it is live (not ended). */
  const liveReply = (chat: ChatState, replyId: string): ReplyState | undefined => {
    const reply = liveOf(chat).replies.get(replyId);
    return reply !== undefined && reply.endedAt === null ? reply : undefined;
  };
  const held = (chat: ChatState, replyId: string, owner: string): ReplyState => {
    const reply = liveReply(chat, replyId);
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
  // Ended replies in the order they ended (a clock that only grows), for the purge: each entry
  // is deleted once its grace period is over, if it is still that ended reply.
  const ended: { readonly live: LiveChat; readonly reply: ReplyState }[] = [];
  const end = (chat: ChatState, reply: ReplyState): void => {
    const now = clock();
    reply.endedAt = now;
    ended.push({ live: liveOf(chat), reply });
    while (ended.length > 0) {
      const oldest = ended[0] as (typeof ended)[number];
      if ((oldest.reply.endedAt ?? now) + graceMs > now) break;
      ended.shift();
      if (oldest.live.replies.get(oldest.reply.replyId) === oldest.reply)
        oldest.live.replies.delete(oldest.reply.replyId);
    }
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
      endedAt: null,
      dataJson: input.dataJson,
      batches: [],
    };
    // An ended reply of the id is replaced: deleted first, so the new one is last in start order.
    const replies = liveOf(chat).replies;
    replies.delete(reply.replyId);
    replies.set(reply.replyId, reply);
    return reply;
  };
  const assertFree = (chat: ChatState, replyId: string): void => {
    if (liveReply(chat, replyId) !== undefined)
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
      if (reply === undefined) return null;
      if (reply.endedAt !== null && reply.endedAt + graceMs <= clock()) return null;
      return read(chat.id, reply, input.from, input.limit);
    },

    getLiveState(chatId) {
      const chat = requireChat(chats, chatId);
      const live = liveOf(chat);
      return {
        chatId,
        changeRevision: chat.revision + live.revision,
        replies: [...live.replies.values()]
          .filter((reply) => reply.endedAt === null)
          .map((reply) => record(chatId, reply)),
      };
    },

    stopReply(input) {
      const chat = requireChat(chats, input.chatId);
      const live = liveOf(chat);
      const replies =
        input.replyId === undefined
          ? [...live.replies.values()].filter((reply) => reply.endedAt === null)
          : [liveReply(chat, input.replyId)].filter((reply) => reply !== undefined);
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
      const reply = liveReply(chat, input.replyId);
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
      const reply = held(chat, input.replyId, input.owner);
      end(chat, reply);
      const live = liveOf(chat);
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
      const ending =
        endReply === undefined ? undefined : held(chat, endReply.replyId, endReply.owner);
      if (startReply !== undefined) assertFree(chat, startReply.replyId);
      const result = commit(input) as CommitResult;
      if (startReply !== undefined) {
        insert(chat, {
          ...startReply,
          branch: result.branch ?? input.branch,
          afterNodeId: result.headMessageId,
        });
      }
      if (ending !== undefined) end(chat, ending);
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
