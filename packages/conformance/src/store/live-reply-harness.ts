import type {
  ChatChange,
  CommitMessage,
  CommitResult,
  ContextStore,
  JsonObject,
  JsonValue,
  LiveReplyMethods,
} from '@ctxgraph/fragments-core';
import { expect } from 'vitest';
import { missingCapability, textMessage, uniqueId } from './store-harness';

// Helpers of the live-reply suites: the capability's methods of a store that declares it, a
// probe of the change feed that waits on notices (never on time), and a question committed with
// its reply's live record.

/** The live-reply methods of a store, all present. */
export type LiveStore = {
  readonly [K in keyof LiveReplyMethods]-?: NonNullable<LiveReplyMethods[K]>;
};

/** The live-reply methods of `store`, bound to it (fails the test when one is missing). */
export function liveOf(store: ContextStore): LiveStore {
  const {
    startReply,
    appendReplyChunks,
    readReply,
    getLiveState,
    stopReply,
    takeOverReply,
    endReply,
    watchChat,
  } = store;
  if (
    startReply === undefined ||
    appendReplyChunks === undefined ||
    readReply === undefined ||
    getLiveState === undefined ||
    stopReply === undefined ||
    takeOverReply === undefined ||
    endReply === undefined ||
    watchChat === undefined
  )
    return expect.fail('capabilities.liveReplies is true but a live-reply method is missing');
  return {
    startReply: (input) => startReply.call(store, input),
    appendReplyChunks: (input) => appendReplyChunks.call(store, input),
    readReply: (input) => readReply.call(store, input),
    getLiveState: (chatId) => getLiveState.call(store, chatId),
    stopReply: (input) => stopReply.call(store, input),
    takeOverReply: (input) => takeOverReply.call(store, input),
    endReply: (input) => endReply.call(store, input),
    watchChat: (chatId, listener) => watchChat.call(store, chatId, listener),
  };
}

/** The live-reply methods, or a skip when the store does not declare `liveReplies`. */
export function liveOrSkip(store: ContextStore, skip: (reason: string) => never): LiveStore {
  const reason = missingCapability(store, 'liveReplies');
  if (reason !== undefined) skip(reason);
  return liveOf(store);
}

/**
 * A watcher of one chat that records its notices and lets a test wait for a condition re-checked
 * after each notice, as a real consumer of the feed does: no sleeping, no timing. A feed that
 * never delivers leaves the wait to the test's timeout.
 */
export class FeedProbe {
  /** Every notice so far, in order. */
  readonly notices: ChatChange[] = [];
  /** Stops the notices. */
  readonly stop: () => void;
  #wake: (() => void)[] = [];

  constructor(live: LiveStore, chatId: string) {
    this.stop = live.watchChat(chatId, (change) => {
      this.notices.push(change);
      const wake = this.#wake;
      this.#wake = [];
      for (const resolve of wake) resolve();
    });
  }

  /** Resolves once there are more than `count` notices. */
  next(count: number): Promise<void> {
    if (this.notices.length > count) return Promise.resolve();
    return new Promise((resolve) => {
      this.#wake.push(resolve);
    });
  }

  /** Resolves once `condition` holds: checked now, and again after each notice. */
  async until(condition: () => Promise<boolean>): Promise<void> {
    for (;;) {
      const seen = this.notices.length;
      if (await condition()) return;
      await this.next(seen);
    }
  }

  /** Resolves once the first notice came (the store watches the chat from then on). */
  ready(): Promise<void> {
    return this.next(0);
  }
}

/** A question and the live reply that answers it, committed together. */
export interface StartedReply {
  readonly questionId: string;
  readonly replyId: string;
  readonly owner: string;
  readonly commit: CommitResult;
}

/** Commits a user question on `branch` (at its head) with `startReply` for a new reply id. */
export async function askWithLiveReply(
  store: ContextStore,
  chatId: string,
  options: {
    readonly branch?: string;
    readonly leaseMs?: number;
    readonly data?: JsonObject;
    readonly owner?: string;
  } = {},
): Promise<StartedReply> {
  const branch = options.branch ?? 'main';
  const questionId = uniqueId('question');
  const replyId = uniqueId('reply');
  const owner = options.owner ?? uniqueId('owner');
  const head = await store.getHead({ chatId, branch });
  const commit = await store.commit({
    chatId,
    branch,
    expectedHeadId: head.headMessageId,
    messages: [{ id: questionId, message: textMessage(questionId, `question ${questionId}`) }],
    startReply: {
      replyId,
      owner,
      leaseMs: options.leaseMs ?? 60_000,
      ...(options.data === undefined ? {} : { data: options.data }),
    },
  });
  return { questionId, replyId, owner, commit };
}

/** UI-message-like chunks `text-delta` `first` to `first + count - 1`. */
export function textChunks(first: number, count: number): JsonValue[] {
  return Array.from({ length: count }, (_, index) => ({
    type: 'text-delta',
    id: 'text-1',
    delta: `chunk ${first + index} 漢字 🎉`,
  }));
}

/** The assistant message that saves a reply holding `text`. */
export function replyMessage(replyId: string, text: string): CommitMessage {
  return { id: replyId, message: textMessage(replyId, text, 'assistant') };
}
