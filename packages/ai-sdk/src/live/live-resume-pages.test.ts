import type { ContextStore, JsonValue, ReadReplyInput } from '@ctxgraph/fragments-core';
import { afterAll, describe, expect, it } from 'vitest';
import { cycleOn, liveStorePairs, newChatId, sseReader } from './__fixtures__/live-test-kit';
import { RESUME_PAGE_CHUNKS } from './live-replies';

// A resume of a long live reply reads it from the store in pages: its first bytes go out after
// the first page's read, however long the reply. Counted, not timed: the reads are recorded and
// every read after the first waits at a gate until the test has seen the first bytes.

const { pairs: storePairs, closeAll } = liveStorePairs('ctxgraph_ai_sdk_live_pages');
afterAll(closeAll);

/** `store`, recording each `readReply` input; every read after the first waits for `open()`. */
function pagedReads(store: ContextStore): {
  store: ContextStore;
  reads: ReadReplyInput[];
  open(): void;
} {
  const reads: ReadReplyInput[] = [];
  let release = (): void => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  const wrapped = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property !== 'readReply') return value.bind(target);
      return async (input: ReadReplyInput) => {
        if (reads.push(input) > 1) await gate;
        return (value as (input: ReadReplyInput) => Promise<unknown>).call(target, input);
      };
    },
  });
  return { store: wrapped, reads, open: release };
}

const textDeltas = (from: number, count: number): JsonValue[] =>
  Array.from({ length: count }, (_, index) => ({
    type: 'text-delta',
    id: 't',
    delta: `w${from + index} `,
  }));

describe.each(storePairs)('a resume reads a long reply in pages (%s)', (_name, open) => {
  it('sends its first bytes after one bounded read, then streams the rest page by page', async () => {
    const clock = { now: 1_000_000 };
    const [writer, reader] = open(clock);
    const chatId = newChatId('pages');
    const replyId = 'long-reply';
    const owner = 'writer-process';
    await writer.openChat({ chatId, userId: 'u' });
    await writer.commit({
      chatId,
      branch: 'main',
      expectedHeadId: null,
      messages: [
        { id: 'q', message: { id: 'q', role: 'user', parts: [{ type: 'text', text: 'Go on.' }] } },
      ],
      startReply: { replyId, owner, leaseMs: 60_000 },
    });
    // 1 000 chunks, written as a writer does: in batches.
    const chunks: JsonValue[] = [
      { type: 'start', messageId: replyId },
      { type: 'text-start', id: 't' },
      ...textDeltas(0, 997),
      { type: 'text-end', id: 't' },
    ];
    for (let from = 0; from < chunks.length; from += 64) {
      await writer.appendReplyChunks?.({
        chatId,
        replyId,
        owner,
        from,
        chunks: chunks.slice(from, from + 64),
        leaseMs: 60_000,
      });
    }
    const counted = pagedReads(reader);
    const response = await cycleOn(counted.store).resume(chatId, { userId: 'u' });
    expect(response.status).toBe(200);
    const events = sseReader(response);
    const [first] = await events.until((seen) => seen.length > 0);
    // The first bytes came out of one read of at most a page; the next read waits at the gate.
    expect(first).toEqual({ type: 'start', messageId: replyId });
    expect(counted.reads.length).toBeLessThanOrEqual(2);
    expect(counted.reads[0]).toMatchObject({ chatId, replyId, from: 0, limit: RESUME_PAGE_CHUNKS });
    expect(RESUME_PAGE_CHUNKS).toBeLessThan(chunks.length);
    counted.open();
    // The reply ends (its last chunk, then its record), and the resume reads it to the end.
    await writer.appendReplyChunks?.({
      chatId,
      replyId,
      owner,
      from: chunks.length,
      chunks: [{ type: 'finish' }],
      leaseMs: 60_000,
    });
    await writer.endReply?.({ chatId, replyId, owner });
    const all = await events.toEnd();
    expect(all).toEqual([...chunks, { type: 'finish' }]);
    // Every read asked for a page, each from where the ones before it ended.
    const froms = counted.reads.map((read) => read.from);
    expect(froms.slice(0, 4)).toEqual([0, 256, 512, 768]);
    for (let index = 1; index < froms.length; index += 1) {
      const step = (froms[index] ?? 0) - (froms[index - 1] ?? 0);
      expect(step).toBeGreaterThanOrEqual(0);
      expect(step).toBeLessThanOrEqual(RESUME_PAGE_CHUNKS);
    }
    for (const read of counted.reads) expect(read.limit).toBe(RESUME_PAGE_CHUNKS);
  });
});
