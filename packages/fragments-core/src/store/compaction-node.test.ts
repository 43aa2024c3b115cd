import { describe, expect, it } from 'vitest';
import {
  type CompactionRecord,
  compactionMessage,
  droppedMessage,
  readBranchSummary,
  readCompaction,
  readDropped,
} from './compaction-node';

const record: CompactionRecord = {
  version: 1,
  boundaryId: 'm4',
  previousCompactionId: null,
  coveredMessages: 4,
  tokens: { tokenizer: 'o200k_base', covered: 120, summary: 20, saved: 100 },
  createdAt: 1_700_000_000_000,
};

describe('compaction nodes', () => {
  it('compactionMessage() makes a one-text-part message whose record reads back', () => {
    const message = compactionMessage({ id: 'c1', text: 'Summary', compaction: record });
    expect(message).toEqual({
      id: 'c1',
      role: 'user',
      parts: [{ type: 'text', text: 'Summary' }],
      metadata: { ctxgraph: { compaction: record } },
    });
    expect(readCompaction(JSON.parse(JSON.stringify(message)))).toEqual(record);
    expect(readBranchSummary(message)).toBeNull();
  });

  it('reads an ordinary message, or a record it does not understand, as no compaction', () => {
    const base = { id: 'x', role: 'user', parts: [] };
    for (const metadata of [
      undefined,
      null,
      'text',
      [],
      { ctxgraph: null },
      { ctxgraph: [] },
      { ctxgraph: { usage: {} } },
      { ctxgraph: { compaction: 'yes' } },
      { ctxgraph: { compaction: { ...record, version: 2 } } },
      { ctxgraph: { compaction: { ...record, boundaryId: '' } } },
      { ctxgraph: { compaction: { ...record, boundaryId: 'x' } } },
      { ctxgraph: { compaction: { ...record, previousCompactionId: 3 } } },
    ]) {
      expect(readCompaction({ ...base, metadata })).toBeNull();
    }
  });

  it('reads a branch summary record', () => {
    const branchSummary = {
      version: 1,
      fromBranch: 'main-v2',
      fromHeadId: 'h',
      coveredMessages: 3,
      createdAt: 1,
    };
    const message = { id: 'b', role: 'user', parts: [], metadata: { ctxgraph: { branchSummary } } };
    expect(readBranchSummary(message)).toEqual(branchSummary);
    expect(readCompaction(message)).toBeNull();
    expect(
      readBranchSummary({ ...message, metadata: { ctxgraph: { branchSummary: { version: 1 } } } }),
    ).toBeNull();
  });
});

describe('dropped messages', () => {
  it('droppedMessage() keeps the id, the role and the recorded usage, no parts, and a record that reads back', () => {
    const original = {
      id: 'm2',
      role: 'assistant',
      parts: [{ type: 'text', text: 'a long answer' }],
      metadata: { ctxgraph: { usage: { inputTokens: 3 } }, app: 1 },
    };
    const dropped = { version: 1, compactionId: 'c1', droppedAt: 5 } as const;
    const tombstone = droppedMessage(original, dropped);
    expect(tombstone).toEqual({
      id: 'm2',
      role: 'assistant',
      parts: [],
      metadata: { ctxgraph: { dropped, usage: { inputTokens: 3 } } },
    });
    expect(droppedMessage({ id: 'm1', role: 'user', parts: [] }, dropped).metadata).toEqual({
      ctxgraph: { dropped },
    });
    expect(readDropped(JSON.parse(JSON.stringify(tombstone)))).toEqual(dropped);
    expect(readDropped(original)).toBeNull();
    expect(readCompaction(tombstone)).toBeNull();
  });

  it('readDropped() ignores records of another format', () => {
    const base = { id: 'x', role: 'user', parts: [] };
    expect(
      readDropped({ ...base, metadata: { ctxgraph: { dropped: { version: 2 } } } }),
    ).toBeNull();
    expect(
      readDropped({
        ...base,
        metadata: { ctxgraph: { dropped: { version: 1, compactionId: 3 } } },
      }),
    ).toBeNull();
    expect(readDropped({ ...base, metadata: 'text' })).toBeNull();
  });
});
