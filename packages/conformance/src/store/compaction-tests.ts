import {
  type CompactionRecord,
  type ContextStore,
  compactionMessage,
  readCompaction,
  type StoredMessage,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  openFreshChat,
  readWholeChain,
  type StoreKit,
  sequentialIds,
  uniqueId,
} from './store-test-kit';

/**
 * A compaction node as the engine writes it: an ordinary message whose `metadata.ctxgraph`
 * carries the record (next to other ctxgraph data, such as recorded usage), with text that must
 * come back byte for byte.
 */
function compactionNode(id: string, boundaryId: string, previous: string | null): StoredMessage {
  const record: CompactionRecord = {
    version: 1,
    boundaryId,
    previousCompactionId: previous,
    coveredMessages: 6,
    tokens: { tokenizer: 'o200k_base', covered: 4_812, summary: 96, saved: 4_716 },
    createdAt: 1_764_000_000_123,
  };
  const base = compactionMessage({
    id,
    text: 'Summary of the conversation so far:\n\nThe user — “Zoë” — chose 🚀 plan B.\t<ok/>',
    compaction: record,
  });
  const metadata = base.metadata as { ctxgraph: Record<string, unknown> };
  return {
    ...base,
    metadata: {
      app: { z: 1, a: [true, null, 2.5] },
      ctxgraph: { usage: { inputTokens: 10, outputTokens: 2 }, ...metadata.ctxgraph },
    },
  };
}

/** Writes `count` turns then a compaction node covering all but the last `kept` of them. */
async function compactedChat(
  store: ContextStore,
  count: number,
  kept: number,
): Promise<{ chatId: string; ids: string[]; boundary: string; node: StoredMessage }> {
  const { chatId } = await openFreshChat(store);
  const ids = sequentialIds(uniqueId('k'), count);
  await appendMessages(store, chatId, ids);
  const boundary = ids[count - kept - 1] as string;
  const node = compactionNode(uniqueId('compaction'), boundary, null);
  await store.commit({
    chatId,
    branch: 'main',
    expectedHeadId: ids.at(-1) as string,
    messages: [{ id: node.id, message: node }],
  });
  return { chatId, ids, boundary, node };
}

/**
 * Compaction nodes: the engine stores a compaction as an ordinary message node (a `UIMessage`
 * whose `metadata.ctxgraph.compaction` names the span's boundary), so any v1 store carries it if
 * it keeps message JSON exactly and reads chains with `until` and `limit` as the contract says.
 */
export function defineCompactionTests(kit: StoreKit): void {
  const { timeout } = kit;

  describe('compaction nodes', () => {
    it(
      'a compaction node round-trips byte for byte (metadata.ctxgraph, key order, text)',
      async () => {
        const store = kit.store();
        const { chatId, ids, node } = await compactedChat(store, 8, 2);
        const stored = await store.getMessage({ chatId, messageId: node.id });
        expect(stored?.parentId).toBe(ids.at(-1));
        expect(JSON.stringify(stored?.message)).toBe(JSON.stringify(node));
        expect(stored && readCompaction(stored.message)).toEqual(readCompaction(node));
        const graph = await store.getGraph(chatId);
        const inGraph = graph.nodes.find((entry) => entry.id === node.id);
        expect(JSON.stringify(inGraph?.message)).toBe(JSON.stringify(node));
      },
      timeout,
    );

    it(
      'a chain read with until at the boundary returns the kept messages and the node only',
      async () => {
        const store = kit.store();
        const { chatId, ids, boundary, node } = await compactedChat(store, 10, 3);
        const page = await store.getChain({ chatId, headMessageId: node.id, until: boundary });
        expect(page.nodes.map((entry) => entry.id)).toEqual([...ids.slice(7), node.id]);
        expect(page.reachedUntil).toBe(true);
        expect(page.nextCursor).toBeNull();
        expect(page.nodes[0]?.parentId).toBe(boundary);
        expect(JSON.stringify(page.nodes.at(-1)?.message)).toBe(JSON.stringify(node));
        // What a cold engine does: the newest page first, then back to the boundary.
        const after = uniqueId('after');
        await appendMessages(store, chatId, [after]);
        const first = await store.getChain({ chatId, headMessageId: after, limit: 2 });
        expect(first.nodes.map((entry) => entry.id)).toEqual([node.id, after]);
        expect(first.nextCursor).toBe(ids.at(-1));
        const rest = await store.getChain({
          chatId,
          headMessageId: first.nextCursor as string,
          until: boundary,
        });
        expect(rest.nodes.map((entry) => entry.id)).toEqual(ids.slice(7));
        expect(rest.reachedUntil).toBe(true);
      },
      timeout,
    );

    it(
      'a compaction of a compaction, and a branch forked before the node, keep their own chains',
      async () => {
        const store = kit.store();
        const { chatId, ids, node } = await compactedChat(store, 6, 2);
        const later = sequentialIds(uniqueId('l'), 4);
        await appendMessages(store, chatId, later);
        const second = compactionNode(uniqueId('compaction'), later[1] as string, node.id);
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: later.at(-1) as string,
          messages: [{ id: second.id, message: second }],
        });
        const page = await store.getChain({
          chatId,
          headMessageId: second.id,
          until: later[1] as string,
        });
        expect(page.nodes.map((entry) => entry.id)).toEqual([...later.slice(2), second.id]);
        expect(readCompaction(page.nodes.at(-1)?.message as StoredMessage)).toMatchObject({
          previousCompactionId: node.id,
        });
        // A branch at the last message before the first node never sees either node.
        await store.createBranch({ chatId, name: 'undo', headMessageId: ids.at(-1) as string });
        const undo = await store.getHead({ chatId, branch: 'undo' });
        const whole = await readWholeChain(store, chatId, undo.headMessageId as string);
        expect(whole.ids).toEqual(ids);
      },
      timeout,
    );

    it(
      'a compaction node survives closing the store and opening it again',
      async ({ skip }) => {
        if (!kit.store().capabilities.persistent || kit.options.reopenStore === undefined)
          skip('the store does not declare capabilities.persistent (or no reopenStore)');
        await kit.withOwnStore(async (store) => {
          const { chatId, boundary, node } = await compactedChat(store, 4, 1);
          await store.close();
          await kit.withReopened(store, async (reopened) => {
            const page = await reopened.getChain({
              chatId,
              headMessageId: node.id,
              until: boundary,
            });
            expect(page.reachedUntil).toBe(true);
            expect(JSON.stringify(page.nodes.at(-1)?.message)).toBe(JSON.stringify(node));
          });
        });
      },
      timeout,
    );
  });
}
