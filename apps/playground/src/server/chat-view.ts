import type { ContextEngine } from '@ctxgraph/engine';
import { type ContextStore, readCompaction } from '@ctxgraph/fragments-core';
import type { ChatView } from '../shared/wire';
import { encodeContext } from './context-codec';
import { rendererFor, renderPreviews } from './renderers';

function textOf(message: { parts: readonly unknown[] }): string {
  return message.parts
    .flatMap((part) =>
      typeof part === 'object' && part !== null && (part as { type?: unknown }).type === 'text'
        ? [String((part as { text?: unknown }).text ?? '')]
        : [],
    )
    .join('');
}

/** What a compaction node replaces, for the page; null for any other message. */
function compactionOf(
  node: Parameters<typeof readCompaction>[0],
): ChatView['graph']['nodes'][number]['compaction'] {
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
      nodes: graph.nodes.map((node) => ({
        id: node.id,
        parentId: node.parentId,
        role: node.message.role,
        sequence: node.sequence,
        text: textOf(node.message),
        compaction: compactionOf(node),
      })),
      branches: [...graph.branches],
      checkpoints: [...graph.checkpoints],
    },
    context: encodeContext(engine.context),
    prompts: renderPreviews(engine.context),
  };
}
