import type { MessageNodeRecord } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import type { ChainEntry } from './chain-cache';

/**
 * The chain entry of written node `index` of a write: `result.nodes` are in input order, so node i
 * carries `messages[i]`. A node under that message's own id says so without opening its message
 * (a store may parse a written message only when it is read); otherwise (a version's node id
 * differs from its message id) it is found by the message id the node holds. The node carries
 * the message we stored (what a later read parses back from its JSON), so keeping it costs no
 * parse of what the store just serialized.
 */
export function writtenEntry(
  node: MessageNodeRecord,
  index: number,
  messages: readonly UIMessage[],
): ChainEntry {
  const candidate = messages[index];
  const message =
    candidate !== undefined && candidate.id === node.id
      ? candidate
      : messageHeldBy(node, candidate, messages);
  if (message === undefined) return { node, message: null, error: null };
  return { node: withMessage(node, message), message, error: null };
}

/** The message of `messages` that `node` holds (by its message id), `candidate` first. */
function messageHeldBy(
  node: MessageNodeRecord,
  candidate: UIMessage | undefined,
  messages: readonly UIMessage[],
): UIMessage | undefined {
  const messageId = node.message.id;
  return candidate?.id === messageId ? candidate : messages.find((each) => each.id === messageId);
}

/** `node` with `message` in place of the store's copy (equal content, already at hand). */
function withMessage(node: MessageNodeRecord, message: UIMessage): MessageNodeRecord {
  const { engineRecord } = node;
  // Spelled out in the order a store's records have (no spread of a temporary object).
  return engineRecord === undefined
    ? {
        chatId: node.chatId,
        id: node.id,
        parentId: node.parentId,
        sequence: node.sequence,
        message,
        createdAt: node.createdAt,
        updatedAt: node.updatedAt,
      }
    : {
        chatId: node.chatId,
        id: node.id,
        parentId: node.parentId,
        sequence: node.sequence,
        message,
        engineRecord,
        createdAt: node.createdAt,
        updatedAt: node.updatedAt,
      };
}
