import { describe, expect, it } from 'vitest';
import {
  type CompactionRecord,
  compactionMessage,
  droppedMessage,
  type EngineRecordSource,
  engineRecordOf,
  readBranchSummary,
  readCompaction,
  readDropped,
  splitEngineRecord,
  withoutEngineMetadata,
} from './compaction-node';
import type { EngineRecord, MessageNodeRecord, StoredMessage } from './records';

const record: CompactionRecord = {
  version: 1,
  boundaryId: 'm4',
  previousCompactionId: null,
  coveredMessages: 4,
  tokens: { tokenizer: 'o200k_base', covered: 120, summary: 20, saved: 100 },
  createdAt: 1_700_000_000_000,
};

/** A node with `engineRecord` beside its message. */
function node(id: string, engineRecord: unknown, message?: Partial<StoredMessage>) {
  return {
    id,
    message: { id, role: 'user', parts: [], ...message },
    engineRecord: engineRecord as EngineRecord | null,
  } satisfies EngineRecordSource;
}

/** A node as a store without engine records (or an earlier version) keeps it. */
function legacy(id: string, metadata: unknown): EngineRecordSource {
  return { id, message: { id, role: 'user', parts: [], metadata } };
}

describe('compaction nodes', () => {
  it('compactionMessage() makes a one-text-part message with the record beside it', () => {
    const entry = compactionMessage({ id: 'c1', text: 'Summary', compaction: record });
    expect(entry).toEqual({
      id: 'c1',
      message: { id: 'c1', role: 'user', parts: [{ type: 'text', text: 'Summary' }] },
      engineRecord: { compaction: record },
    });
    expect(readCompaction(JSON.parse(JSON.stringify(entry)))).toEqual(record);
    expect(readBranchSummary(entry)).toBeNull();
  });

  it('reads an ordinary node, or a record it does not understand, as no compaction', () => {
    for (const engineRecord of [
      undefined,
      null,
      'text',
      [],
      { usage: {} },
      { compaction: 'yes' },
      { compaction: { ...record, version: 2 } },
      { compaction: { ...record, boundaryId: '' } },
      { compaction: { ...record, boundaryId: 'x' } },
      { compaction: { ...record, previousCompactionId: 3 } },
    ]) {
      expect(readCompaction(node('x', engineRecord))).toBeNull();
    }
  });

  it('reads a provider compaction that names no boundary as one at its parent', () => {
    const provider = { provider: 'anthropic', partIndex: 0 };
    const unnamed = { compaction: { ...record, boundaryId: '', provider } };
    expect(readCompaction({ ...node('r', unnamed), parentId: 'q2~7' })).toEqual({
      ...record,
      boundaryId: 'q2~7',
      provider,
    });
    // Without a parent to name, or for the engine's own compaction, it is no compaction.
    expect(readCompaction(node('r', unnamed))).toBeNull();
    expect(readCompaction({ ...node('r', unnamed), parentId: null })).toBeNull();
    const own = { compaction: { ...record, boundaryId: '' } };
    expect(readCompaction({ ...node('r', own), parentId: 'q2~7' })).toBeNull();
    // A named boundary is read as written, whatever the parent.
    expect(readCompaction({ ...node('r', { compaction: record }), parentId: 'p' })).toEqual(record);
  });

  it('reads a branch summary record', () => {
    const branchSummary = {
      version: 1,
      fromBranch: 'main-v2',
      fromHeadId: 'h',
      coveredMessages: 3,
      createdAt: 1,
    };
    expect(readBranchSummary(node('b', { branchSummary }))).toEqual(branchSummary);
    expect(readCompaction(node('b', { branchSummary }))).toBeNull();
    expect(readBranchSummary(node('b', { branchSummary: { version: 1 } }))).toBeNull();
  });
});

describe('records kept in metadata.ctxgraph (data stored by earlier versions)', () => {
  it('reads a record from the message when the node has none beside it', () => {
    expect(readCompaction(legacy('c', { ctxgraph: { compaction: record } }))).toEqual(record);
    for (const metadata of [undefined, null, 'text', [], { ctxgraph: null }, { ctxgraph: [] }]) {
      expect(engineRecordOf(legacy('c', metadata))).toBeNull();
    }
  });

  it('prefers the record beside the message', () => {
    const both = node('c', { compaction: record }, { metadata: { ctxgraph: { usage: {} } } });
    expect(engineRecordOf(both)).toEqual({ compaction: record });
  });

  it('splitEngineRecord() moves the record out of the message', () => {
    const stored: MessageNodeRecord = {
      chatId: 'chat',
      id: 'a',
      parentId: null,
      sequence: 1,
      message: {
        id: 'a',
        role: 'assistant',
        parts: [],
        metadata: { app: 1, ctxgraph: { usage: { n: 1 } } },
      },
      createdAt: 1,
      updatedAt: 1,
    };
    const split = splitEngineRecord(stored);
    expect(split.message).toEqual({ id: 'a', role: 'assistant', parts: [], metadata: { app: 1 } });
    expect(split.engineRecord).toEqual({ usage: { n: 1 } });
    expect(split).toMatchObject({ id: 'a', parentId: null, sequence: 1 });
    const plain = { ...stored, message: { id: 'a', role: 'user', parts: [] } };
    expect(splitEngineRecord(plain)).toBe(plain);
  });

  it('withoutEngineMetadata() drops the key (and metadata left empty), keeps every other key as an own key', () => {
    const message = { id: 'a', metadata: { ctxgraph: { usage: 1 } } };
    expect(withoutEngineMetadata(message)).toEqual({ id: 'a' });
    const odd = JSON.parse('{"id":"a","metadata":{"__proto__":1,"ctxgraph":2}}');
    const stripped = withoutEngineMetadata(odd) as { metadata: object };
    expect(Object.keys(stripped.metadata)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(stripped.metadata)).toBe(Object.prototype);
    const untouched = { id: 'b', metadata: { app: 1 } };
    expect(withoutEngineMetadata(untouched)).toBe(untouched);
  });
});

describe('dropped messages', () => {
  it('droppedMessage() keeps the id, the role and the recorded usage, no parts, and a record that reads back', () => {
    const original = node(
      'm2',
      { usage: { inputTokens: 3 } },
      { role: 'assistant', parts: [{ type: 'text', text: 'a long answer' }], metadata: { app: 1 } },
    );
    const dropped = { version: 1, compactionId: 'c1', droppedAt: 5 } as const;
    const tombstone = droppedMessage(original, dropped);
    expect(tombstone).toEqual({
      id: 'm2',
      message: { id: 'm2', role: 'assistant', parts: [] },
      engineRecord: { dropped, usage: { inputTokens: 3 } },
    });
    expect(droppedMessage(node('m1', null), dropped).engineRecord).toEqual({ dropped });
    expect(readDropped(JSON.parse(JSON.stringify(tombstone)))).toEqual(dropped);
    expect(readDropped(original)).toBeNull();
    expect(readCompaction(tombstone)).toBeNull();
  });

  it("droppedMessage() of a message version keeps the node id and the message's own id", () => {
    const version = { ...node('m2~2', null), message: { id: 'm2', role: 'user', parts: [] } };
    const dropped = { version: 1, compactionId: 'c1', droppedAt: 5 } as const;
    expect(droppedMessage(version, dropped)).toEqual({
      id: 'm2~2',
      message: { id: 'm2', role: 'user', parts: [] },
      engineRecord: { dropped },
    });
  });

  it('readDropped() ignores records of another format', () => {
    expect(readDropped(node('x', { dropped: { version: 2 } }))).toBeNull();
    expect(readDropped(node('x', { dropped: { version: 1, compactionId: 3 } }))).toBeNull();
  });
});
