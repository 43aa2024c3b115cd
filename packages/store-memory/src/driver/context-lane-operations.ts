import {
  ContextConflictError,
  type ContextLaneRecord,
  type JsonValue,
} from '@ctxgraph/fragments-core';
import type { ContextStoreDriver } from '@ctxgraph/fragments-core/store-kit';
import { type ChatState, type MemoryChats, requireChat, timeAfter } from './memory-state';

/** The context-lane operations of the memory driver. */
export type ContextLaneOperations = Required<
  Pick<ContextStoreDriver, 'getContext' | 'saveContext'>
>;

/**
 * The context lane: each chat's serialized context fragments, kept with the chat (and deleted
 * with it), with a revision that goes up by one per save. Saving does not touch the chat's
 * `revision`, which counts message commits only; it does move the chat's `updatedAt`, like every
 * other write to the chat.
 */
export function contextLaneOperations(chats: MemoryChats): ContextLaneOperations {
  return {
    getContext(chatId) {
      return laneRecord(requireChat(chats, chatId));
    },

    // Compares the revision and writes in one synchronous stretch: of concurrent saves expecting
    // the same revision, exactly one wins.
    saveContext(input) {
      const chat = requireChat(chats, input.chatId);
      const currentRevision = chat.context?.revision ?? 0;
      if (input.expectedRevision !== undefined && input.expectedRevision !== currentRevision) {
        throw new ContextConflictError({
          chatId: chat.id,
          expectedRevision: input.expectedRevision,
          currentRevision,
        });
      }
      const now = timeAfter(Math.max(chat.updatedAt, chat.context?.updatedAt ?? 0));
      chat.context = { json: input.fragmentsJson, revision: currentRevision + 1, updatedAt: now };
      chat.updatedAt = now;
      return laneRecord(chat);
    },
  };
}

function laneRecord(chat: ChatState): ContextLaneRecord {
  const lane = chat.context;
  if (lane === undefined) return { chatId: chat.id, fragments: [], revision: 0, updatedAt: null };
  return {
    chatId: chat.id,
    fragments: JSON.parse(lane.json) as JsonValue[],
    revision: lane.revision,
    updatedAt: lane.updatedAt,
  };
}
