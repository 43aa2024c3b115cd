import { describe, expect, it } from 'vitest';
import {
  type CompactionRecord,
  compactionMessage,
  readBranchSummary,
  readCompaction,
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
