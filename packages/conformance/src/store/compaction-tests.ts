import {
  type CommitMessage,
  type CompactionRecord,
  type ContextStore,
  compactionMessage,
  type MessageNodeRecord,
  readCompaction,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  openFreshChat,
  readWholeChain,
  type StoreHarness,
  sequentialIds,
  uniqueId,
} from './store-harness';

/**
 * A compaction node as the engine writes it: a message with text that must come back byte for
 * byte, and the record (next to other engine data, such as recorded usage) beside it in the
 * node's engine record.
 */
function compactionNode(id: string, boundaryId: string, previous: string | null): CommitMessage {
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
  return {
    id,
    message: { ...base.message, metadata: { app: { z: 1, a: [true, null, 2.5] } } },
    engineRecord: { usage: { inputTokens: 10, outputTokens: 2 }, ...base.engineRecord },
  };
}

/** The node as stored holds exactly what was written: message and engine record, byte for byte. */
function expectStored(stored: MessageNodeRecord | null | undefined, written: CommitMessage): void {
  expect(JSON.stringify(stored?.message)).toBe(JSON.stringify(written.message));
  expect(JSON.stringify(stored?.engineRecord ?? null)).toBe(
    JSON.stringify(written.engineRecord ?? null),
  );
}

/** Writes `count` turns then a compaction node covering all but the last `kept` of them. */
async function compactedChat(
  store: ContextStore,
  count: number,
  kept: number,
): Promise<{ chatId: string; ids: string[]; boundary: string; node: CommitMessage }> {
  const { chatId } = await openFreshChat(store);
  const ids = sequentialIds(uniqueId('k'), count);
  await appendMessages(store, chatId, ids);
  const boundary = ids[count - kept - 1] as string;
  const node = compactionNode(uniqueId('compaction'), boundary, null);
  await store.commit({
    chatId,
    branch: 'main',
    expectedHeadId: ids.at(-1) as string,
    messages: [node],
  });
  return { chatId, ids, boundary, node };
}

/**
 * Compaction nodes: the engine stores a compaction as an ordinary message node whose engine
 * record's `compaction` names the span's boundary (kept beside the message by a store with
 * `engineRecords`, inside its `metadata.ctxgraph` by any other), so any v1 store carries it if it
 * keeps JSON exactly and reads chains with `until` and `limit` as the contract says.
 */
export function defineCompactionTests(harness: StoreHarness): void {
  const { timeout } = harness;

  describe('compaction nodes', () => {
    it(
      'a compaction node round-trips byte for byte (its record, key order, text)',
      async () => {
        const store = harness.store();
        const { chatId, ids, node } = await compactedChat(store, 8, 2);
        const stored = await store.getMessage({ chatId, messageId: node.id });
        expect(stored?.parentId).toBe(ids.at(-1));
        expectStored(stored, node);
        expect(stored && readCompaction(stored)).toEqual(readCompaction(node));
        expect(readCompaction(node)).not.toBeNull();
        const graph = await store.getGraph(chatId);
        expectStored(
          graph.nodes.find((entry) => entry.id === node.id),
          node,
        );
      },
      timeout,
    );

    it(
      'a chain read with until at the boundary returns the kept messages and the node only',
      async () => {
        const store = harness.store();
        const { chatId, ids, boundary, node } = await compactedChat(store, 10, 3);
        const page = await store.getChain({ chatId, headMessageId: node.id, until: boundary });
        expect(page.nodes.map((entry) => entry.id)).toEqual([...ids.slice(7), node.id]);
        expect(page.reachedUntil).toBe(true);
        expect(page.nextCursor).toBeNull();
        expect(page.nodes[0]?.parentId).toBe(boundary);
        expectStored(page.nodes.at(-1), node);
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
        const store = harness.store();
        const { chatId, ids, node } = await compactedChat(store, 6, 2);
        const later = sequentialIds(uniqueId('l'), 4);
        await appendMessages(store, chatId, later);
        const second = compactionNode(uniqueId('compaction'), later[1] as string, node.id);
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: later.at(-1) as string,
          messages: [second],
        });
        const page = await store.getChain({
          chatId,
          headMessageId: second.id,
          until: later[1] as string,
        });
        expect(page.nodes.map((entry) => entry.id)).toEqual([...later.slice(2), second.id]);
        expect(readCompaction(page.nodes.at(-1) as MessageNodeRecord)).toMatchObject({
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
        if (!harness.store().capabilities.persistent || harness.options.reopenStore === undefined)
          skip('the store does not declare capabilities.persistent (or no reopenStore)');
        await harness.withOwnStore(async (store) => {
          const { chatId, boundary, node } = await compactedChat(store, 4, 1);
          await store.close();
          await harness.withReopened(store, async (reopened) => {
            const page = await reopened.getChain({
              chatId,
              headMessageId: node.id,
              until: boundary,
            });
            expect(page.reachedUntil).toBe(true);
            expectStored(page.nodes.at(-1), node);
          });
        });
      },
      timeout,
    );
  });
}
