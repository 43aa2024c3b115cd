import { type ContextEngine, usageOf } from '@ctxgraph/engine';
import {
  type BranchRecord,
  type ChatRecord,
  type CheckpointRecord,
  type ContextStore,
  type JsonValue,
  type MessageNodeRecord,
  readBranchSummary,
  readCompaction,
  readDropped,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { encodeContext } from './context-codec';
import { type PromptPreview, rendererFor, renderPreviews } from './renderers';

/** A message node as the page draws it. */
export interface GraphNodeView {
  /** The message id. */
  id: string;
  /** The node it follows, or null for a root. */
  parentId: string | null;
  /** `user`, `assistant`, … */
  role: string;
  /** Its place in the chat (the store's per-chat sequence). */
  sequence: number;
  /** Its text parts, joined. */
  text: string;
  /** What it replaces, when it is a compaction node (the engine's `compact()`), or null. */
  compaction: {
    /** The last message of the span it summarizes. */
    boundaryId: string;
    /** The compaction whose view the span starts from, or null from the root. */
    previousCompactionId: string | null;
    /** How many messages the summary replaces. */
    coveredMessages: number;
    /** Tokens each resolve after it no longer sends. */
    savedTokens: number;
  } | null;
  /**
   * A branch summary or a dropped message: like a compaction node, never counted among the
   * versions of its siblings (the engine's `versions()` rule).
   */
  aside: boolean;
  /**
   * How the model call that wrote it ended, when not complete (its recorded usage's `outcome`):
   * `'aborted'` for a reply stopped mid-stream, `'error'` for one that failed; null otherwise.
   */
  outcome: 'aborted' | 'error' | null;
}

/**
 * Everything the page shows about one chat (the answer of most chat routes). The page reads this
 * shape from the routes' type (`hc<PlaygroundRoutes>`), never from a copy.
 */
export interface ChatView {
  /** The chat as stored. */
  chat: ChatRecord;
  /** The active branch. */
  branch: string;
  /** Its head, or null while it has no message. */
  headMessageId: string | null;
  /** The active branch's messages, oldest first. */
  messages: UIMessage[];
  /** The whole message graph, with every branch and checkpoint. */
  graph: { nodes: GraphNodeView[]; branches: BranchRecord[]; checkpoints: CheckpointRecord[] };
  /** The chat's context fragments, serialized. */
  context: JsonValue[];
  /** The context rendered by every renderer. */
  prompts: PromptPreview[];
}

function textOf(message: { parts: readonly unknown[] }): string {
  return message.parts
    .flatMap((part) =>
      typeof part === 'object' && part !== null && (part as { type?: unknown }).type === 'text'
        ? [String((part as { text?: unknown }).text ?? '')]
        : [],
    )
    .join('');
}

/**
 * What saving one message changed, as `POST /chats/:chatId/messages` answers it: the new
 * message (for the conversation) and its node (for the graph), the branch head it moved, the
 * branch records and the chat record (its `updatedAt`). The page adds this to the chat it holds;
 * the rest of the chat (the other messages, the context, the prompts) did not change. A chat of
 * thousands of messages answers a few hundred bytes, not the whole chat.
 */
export interface MessageAdded {
  chat: ChatRecord;
  branch: string;
  headMessageId: string;
  /** The saved message as the conversation shows it. */
  message: UIMessage;
  /** Its node, as the graph draws it. */
  node: GraphNodeView;
  /** Every branch of the chat (the active one's head moved). */
  branches: BranchRecord[];
}

/**
 * What the engine's last `save()` of one message changed (see {@link MessageAdded}): three small
 * reads (the node, the chat, the branches), never the chain or the graph.
 */
export async function buildMessageAdded(
  engine: ContextEngine,
  store: ContextStore,
): Promise<MessageAdded> {
  const headMessageId = engine.headMessageId;
  if (headMessageId === undefined) throw new Error('the engine has no head after saving');
  const [node, chat, branches] = await Promise.all([
    store.getMessage({ chatId: engine.chatId, messageId: headMessageId }),
    store.getChat(engine.chatId),
    store.listBranches(engine.chatId),
  ]);
  if (node === null || chat === null) throw new Error('the saved message is not in the store');
  return {
    chat,
    branch: engine.branch,
    headMessageId,
    // The conversation shows its id, role and parts (nothing of the stored metadata, where a
    // store without engine records keeps the engine's).
    message: {
      id: node.message.id,
      role: node.message.role,
      parts: node.message.parts,
    } as UIMessage,
    node: nodeViewOf(node),
    branches,
  };
}

/**
 * What a model reply through the chat cycle added (the `done` event of `POST …/reply`): the
 * question and the reply, each as the conversation shows it and as the graph draws it, the
 * branch head and records that moved. Like {@link MessageAdded}, a few hundred bytes whatever the
 * chat's size.
 */
export interface ExchangeAdded {
  chat: ChatRecord;
  branch: string;
  headMessageId: string;
  /** The question, then the reply, oldest first. */
  added: { message: UIMessage; node: GraphNodeView }[];
  branches: BranchRecord[];
}

/**
 * The exchange a reply ended, read after the cycle saved it: the reply is the node `replyNodeId`,
 * the question its parent. Reads two nodes, the chat and the branches.
 */
export async function buildExchangeAdded(
  engine: ContextEngine,
  store: ContextStore,
  replyNodeId: string,
): Promise<ExchangeAdded> {
  const chatId = engine.chatId;
  const reply = await store.getMessage({ chatId, messageId: replyNodeId });
  if (reply === null) throw new Error('the saved reply is not in the store');
  const [question, chat, branches] = await Promise.all([
    reply.parentId === null ? null : store.getMessage({ chatId, messageId: reply.parentId }),
    store.getChat(chatId),
    store.listBranches(chatId),
  ]);
  if (chat === null) throw new Error('the chat is not in the store');
  const shown = (node: MessageNodeRecord) => ({
    message: {
      id: node.message.id,
      role: node.message.role,
      parts: node.message.parts,
    } as UIMessage,
    node: nodeViewOf(node),
  });
  return {
    chat,
    branch: engine.branch,
    headMessageId: engine.headMessageId ?? reply.id,
    added: [...(question === null ? [] : [shown(question)]), shown(reply)],
    branches,
  };
}

/** A stored node as the graph draws it. */
function nodeViewOf(node: MessageNodeRecord): GraphNodeView {
  return {
    id: node.id,
    parentId: node.parentId,
    role: node.message.role,
    sequence: node.sequence,
    text: textOf(node.message),
    compaction: compactionOf(node),
    aside: readBranchSummary(node) !== null || readDropped(node) !== null,
    outcome: outcomeOf(node),
  };
}

/** A reply's unfinished outcome from its recorded usage, or null (complete, or no usage). */
function outcomeOf(node: MessageNodeRecord): GraphNodeView['outcome'] {
  const outcome = usageOf(node)?.outcome;
  return outcome === 'aborted' || outcome === 'error' ? outcome : null;
}

/** What a compaction node replaces, for the page; null for any other message. */
function compactionOf(node: Parameters<typeof readCompaction>[0]): GraphNodeView['compaction'] {
  const record = readCompaction(node);
  if (record === null) return null;
  return {
    boundaryId: record.boundaryId,
    previousCompactionId: record.previousCompactionId,
    coveredMessages: record.coveredMessages,
    savedTokens: record.tokens.saved,
  };
}

/**
 * Everything the page shows about the engine's chat. On a warm engine this costs two reads: the
 * branch head (the engine re-reads its chain only when the head moved) and the graph. The
 * context comes from the engine, which holds it, not from the repository.
 */
export async function buildChatView(engine: ContextEngine, store: ContextStore): Promise<ChatView> {
  const { messages } = await engine.resolve({ renderer: rendererFor('xml') });
  const graph = await store.getGraph(engine.chatId);
  return {
    chat: graph.chat,
    branch: engine.branch,
    headMessageId: engine.headMessageId ?? null,
    messages,
    graph: {
      nodes: graph.nodes.map(nodeViewOf),
      branches: [...graph.branches],
      checkpoints: [...graph.checkpoints],
    },
    context: encodeContext(engine.context),
    prompts: renderPreviews(engine.context),
  };
}
