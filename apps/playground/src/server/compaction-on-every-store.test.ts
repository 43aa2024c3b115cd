import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assistant, user } from '@ctxgraph/codecs';
import { ContextEngine, type Summarizer } from '@ctxgraph/engine';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import type { UIMessage } from 'ai';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgresServer } from '../../../../tooling/postgres-server.ts';

// The engine's compaction on each bundled store: the node is an ordinary message, so what the
// engine does on the memory store it must do on SQLite and PostgreSQL too.

const renderer = new XmlRenderer();
const texts = (messages: readonly UIMessage[]): string[] =>
  messages.map((entry) =>
    entry.parts.map((part) => (part.type === 'text' ? part.text : part.type)).join(''),
  );
const summary = (text: string): string => `Summary of the conversation so far:\n\n${text}`;

async function talk(engine: ContextEngine, from: number, turns: number): Promise<void> {
  for (let turn = from; turn < from + turns; turn += 1) {
    engine.set(user(`q${turn}`, { id: `u${turn}` }), assistant(`a${turn}`, { id: `a${turn}` }));
  }
  await engine.save();
}

let chats = 0;
function engineOn(store: ContextStore, chatId?: string): ContextEngine {
  chats += 1;
  return new ContextEngine({
    store,
    chatId: chatId ?? `compaction-${Date.now()}-${chats}`,
    userId: 'tester',
    renderer,
  });
}

function compactionScenarios(name: string, open: () => ContextStore): void {
  describe(`compaction on ${name}`, () => {
    let store: ContextStore;
    beforeAll(() => {
      store = open();
    });
    afterAll(async () => {
      await store.close();
    });

    it('replaces the span for this branch only, cold and warm, and rewinding undoes it', async () => {
      const engine = engineOn(store);
      await talk(engine, 1, 4);
      const side = await engine.btw();
      const full = texts((await engine.resolve()).messages);
      const result = await engine.compact({ summarize: () => 'S1', keep: 1 });
      expect(result?.compaction.boundaryId).toBe('a3');
      const compacted = [summary('S1'), 'q4', 'a4'];
      expect(texts((await engine.resolve()).messages)).toEqual(compacted);
      const cold = engineOn(store, engine.chatId);
      expect(texts((await cold.resolve()).messages)).toEqual(compacted);
      await cold.switchBranch(side.name);
      expect(texts((await cold.resolve()).messages)).toEqual(full);
      await engine.rewind('a4');
      expect(texts((await engine.resolve()).messages)).toEqual(full);
    });

    it('compacts a compaction, and keeps a turn another writer saved meanwhile', async () => {
      const engine = engineOn(store);
      await talk(engine, 1, 3);
      const first = await engine.compact({ summarize: () => 'S1', keep: 1 });
      await talk(engine, 4, 2);
      const other = engineOn(store, engine.chatId);
      const seen: string[][] = [];
      const summarize: Summarizer = async (messages) => {
        seen.push(texts(messages));
        await talk(other, 6, 1);
        return 'S2';
      };
      const second = await engine.compact({ summarize, keep: 1 });
      expect(seen[0]?.[0]).toBe(summary('S1'));
      expect(second?.compaction.previousCompactionId).toBe(first?.messageId);
      expect(second?.attachedTo).toBe('a6');
      const expected = [summary('S2'), 'q5', 'a5', 'q6', 'a6'];
      expect(texts((await engine.resolve()).messages)).toEqual(expected);
      expect(texts((await engineOn(store, engine.chatId).resolve()).messages)).toEqual(expected);
    });

    it("prune({ compacted: 'drop' }) tombstones what only the summary shows; search forgets it", async () => {
      const engine = engineOn(store);
      engine.set(user('zebra facts', { id: 'u1' }), assistant('a zebra has stripes', { id: 'a1' }));
      await engine.save();
      await talk(engine, 2, 3);
      await store.createBranch({ chatId: engine.chatId, name: 'side', headMessageId: 'a2' });
      await engine.compact({ summarize: () => 'S1', keep: 1 });
      const compacted = [summary('S1'), 'q4', 'a4'];
      const dry = await engine.prune({ compacted: 'drop', dryRun: true });
      expect(dry.compacted.messageIds).toEqual(['u3', 'a3']);
      const done = await engine.prune({ compacted: 'drop' });
      expect(done.compacted).toEqual(dry.compacted);
      const node = await store.getMessage({ chatId: engine.chatId, messageId: 'u3' });
      expect(node?.message.parts).toEqual([]);
      expect(texts((await engine.resolve()).messages)).toEqual(compacted);
      expect(texts((await engineOn(store, engine.chatId).resolve()).messages)).toEqual(compacted);
      // The side branch still shows its history in full; only then does the drop reach it.
      const side = engineOn(store, engine.chatId);
      await side.switchBranch('side');
      expect(texts((await side.resolve()).messages)).toEqual([
        'zebra facts',
        'a zebra has stripes',
        'q2',
        'a2',
      ]);
      expect((await engine.search('zebra', { scope: 'chat' })).items).toHaveLength(2);
      await engine.deleteBranch('side', { activate: 'main' });
      const second = await engine.prune({ compacted: 'drop' });
      expect(second.compacted.messageIds).toEqual(['u1', 'a1', 'u2', 'a2']);
      expect((await engine.search('zebra', { scope: 'chat' })).items).toHaveLength(0);
      await engine.rewind('a4');
      expect(texts((await engine.resolve()).messages)).toEqual(['q4', 'a4']);
    });

    it('writes nothing when the summarizer throws', async () => {
      const engine = engineOn(store);
      await talk(engine, 1, 3);
      const before = await store.getHead({ chatId: engine.chatId, branch: 'main' });
      await expect(
        engine.compact({
          summarize: () => {
            throw new Error('offline');
          },
        }),
      ).rejects.toThrow(/Nothing was written/);
      expect(await store.getHead({ chatId: engine.chatId, branch: 'main' })).toEqual(before);
    });
  });
}

compactionScenarios('memory', () => new InMemoryContextStore());

const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-compaction-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
compactionScenarios(
  'SQLite',
  () => new SqliteContextStore({ path: join(directory, 'compaction.sqlite') }),
);

describe('on PostgreSQL', () => {
  // DATABASE_URL when given; otherwise a throwaway embedded PostgreSQL. A schema of its own, so
  // the test never meets tables another run (or store version) left behind.
  const schema = `compaction_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`;
  let url = '';
  let stop = async (): Promise<void> => {};
  beforeAll(async () => {
    const server = await startPostgresServer();
    url = server.url;
    stop = server.stop;
  });
  afterAll(async () => {
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
    await stop();
  });
  compactionScenarios(
    'PostgreSQL',
    () => new PostgresContextStore({ connectionString: url, schema }),
  );
});
