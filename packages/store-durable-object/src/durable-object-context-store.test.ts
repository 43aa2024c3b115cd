import { env, evictDurableObject, runInDurableObject } from 'cloudflare:test';
import { SchemaVersionError, ValidationError } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import type { KeyValueObject, TestChatObject } from './__fixtures__/test-worker';
import type { DurableObjectStorageLike } from './driver/sql-storage';
import { DurableObjectContextStore } from './durable-object-context-store';

const chats = (env as unknown as { TEST_CHATS: DurableObjectNamespace<TestChatObject> }).TEST_CHATS;

function freshObject(): DurableObjectStub<TestChatObject> {
  return chats.get(chats.idFromName(`store-${crypto.randomUUID()}`));
}

const message = (id: string, text: string) => ({
  id,
  message: { id, role: 'user' as const, parts: [{ type: 'text' as const, text }] },
});

describe('DurableObjectContextStore inside its object', () => {
  it('creates its tables in the constructor, and finds them current when the object comes back', async () => {
    const stub = freshObject();
    const first = await runInDurableObject(stub, async (object) => {
      const store = object.stores[0] as DurableObjectContextStore;
      const { branch } = await store.openChat({ chatId: 'c1', userId: 'ada' });
      await store.commit({
        chatId: 'c1',
        branch: branch.name,
        expectedHeadId: null,
        messages: [message('m1', 'kept across eviction')],
      });
      return store.migration;
    });
    expect(first).toEqual({
      from: 0,
      to: 3,
      applied: ['initial', 'live replies', 'message search'],
    });

    // A new instance of the object (the platform evicts idle objects): same storage, no step run.
    await evictDurableObject(stub);
    const second = await runInDurableObject(stub, async (object) => {
      const store = object.stores[0] as DurableObjectContextStore;
      const chain = await store.getChain({ chatId: 'c1', headMessageId: 'm1' });
      return { migration: store.migration, texts: chain.nodes.map((node) => node.message.parts) };
    });
    expect(second.migration).toEqual({ from: 3, to: 3, applied: [] });
    expect(second.texts).toEqual([[{ type: 'text', text: 'kept across eviction' }]]);
  });

  it('refuses tables newer than its code with SchemaVersionError', async () => {
    const error = await runInDurableObject(freshObject(), (_object, state) => {
      state.storage.sql.exec(
        'INSERT INTO ctxgraph_migrations (version, name, applied_at) VALUES (4, ?, 0)',
        'from-the-future',
      );
      try {
        new DurableObjectContextStore(state.storage);
        return null;
      } catch (caught) {
        return caught;
      }
    });
    expect(SchemaVersionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/schema version 4, newer than this code's 3/);
  });

  it('refuses a storage without SQL (a class missing from new_sqlite_classes) with ValidationError', () => {
    const withoutSql = { transactionSync: <T>(closure: () => T) => closure() };
    expect(
      () => new DurableObjectContextStore(withoutSql as unknown as DurableObjectStorageLike),
    ).toThrow(ValidationError);
    expect(
      () => new DurableObjectContextStore(withoutSql as unknown as DurableObjectStorageLike),
    ).toThrow(/new_sqlite_classes/);
  });

  it('refuses the storage of a key-value object with ValidationError, the platform error as cause', async () => {
    const objects = (env as unknown as { KV_OBJECTS: DurableObjectNamespace<KeyValueObject> })
      .KV_OBJECTS;
    const error = await runInDurableObject(
      objects.get(objects.idFromName('key-value')),
      (_object, state) => {
        try {
          new DurableObjectContextStore(state.storage);
          return null;
        } catch (caught) {
          return caught;
        }
      },
    );
    expect(ValidationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/new_sqlite_classes/);
    expect(String((error as Error).cause)).toMatch(/SQL is not enabled/);
  });

  it('leaves nothing of a write the database refuses halfway (one transactionSync per write)', async () => {
    const outcome = await runInDurableObject(freshObject(), async (object, state) => {
      const store = object.stores[0] as DurableObjectContextStore;
      const { branch } = await store.openChat({ chatId: 'c1', userId: 'ada' });
      // A trigger that fails the second insert of the batch, after the first one was written.
      state.storage.sql.exec(
        `CREATE TRIGGER refuse_second AFTER INSERT ON ctxgraph_nodes WHEN NEW.sequence = 2
         BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
      );
      const failure = await store
        .commit({
          chatId: 'c1',
          branch: branch.name,
          expectedHeadId: null,
          messages: [message('m1', 'one'), message('m2', 'two')],
        })
        .then(
          () => null,
          (error: unknown) => error,
        );
      const graph = await store.getGraph('c1');
      return { failure: String(failure), nodes: graph.nodes.length, revision: graph.chat.revision };
    });
    expect(outcome.failure).toMatch(/StoreError/);
    expect(outcome.nodes).toBe(0);
    expect(outcome.revision).toBe(0);
  });

  it('upgrades the tables of the first schema (an object deployed before live replies) to serve them', async () => {
    const outcome = await runInDurableObject(freshObject(), async (_object, state) => {
      // The object as the first schema left it: a chat with a question, no live-reply tables.
      const first = new DurableObjectContextStore(state.storage);
      await first.openChat({ chatId: 'c1', userId: 'ada' });
      await first.commit({
        chatId: 'c1',
        branch: 'main',
        expectedHeadId: null,
        messages: [message('q1', 'asked before the upgrade')],
      });
      await first.close();
      for (const table of [
        'ctxgraph_live_chunks',
        'ctxgraph_live_replies',
        'ctxgraph_live_revisions',
        'ctxgraph_message_search',
        'ctxgraph_search_state',
      ])
        state.storage.sql.exec(`DROP TABLE ${table}`);
      state.storage.sql.exec('DELETE FROM ctxgraph_migrations WHERE version >= 2');

      const upgraded = new DurableObjectContextStore(state.storage);
      const reply = await upgraded.startReply({
        chatId: 'c1',
        replyId: 'r1',
        branch: 'main',
        afterNodeId: 'q1',
        owner: 'writer',
        leaseMs: 60_000,
      });
      await upgraded.appendReplyChunks({
        chatId: 'c1',
        replyId: 'r1',
        owner: 'writer',
        from: 0,
        chunks: [{ type: 'text-delta', id: 't', delta: 'after' }],
        leaseMs: 60_000,
      });
      const read = await upgraded.readReply({ chatId: 'c1', replyId: 'r1' });
      const chain = await upgraded.getChain({ chatId: 'c1', headMessageId: 'q1' });
      return {
        migration: upgraded.migration,
        afterNodeId: reply.afterNodeId,
        chunks: read?.chunks,
        kept: chain.nodes.map((node) => node.id),
      };
    });
    expect(outcome.migration).toEqual({
      from: 1,
      to: 3,
      applied: ['live replies', 'message search'],
    });
    expect(outcome.afterNodeId).toBe('q1');
    expect(outcome.chunks).toEqual([{ type: 'text-delta', id: 't', delta: 'after' }]);
    expect(outcome.kept).toEqual(['q1']);
  });

  it('refuses a clock that is not a function and a grace period out of range with ValidationError', async () => {
    const errors = await runInDurableObject(freshObject(), (_object, state) => {
      const attempt = (options: object): unknown => {
        try {
          new DurableObjectContextStore(state.storage, options);
          return null;
        } catch (caught) {
          return caught;
        }
      };
      return [attempt({ clock: 5 }), attempt({ endedReplyGraceMs: 10 })];
    });
    expect(errors.map((error) => ValidationError.isInstance(error))).toEqual([true, true]);
    expect(errors.map((error) => (error as Error).message)).toEqual([
      expect.stringMatching(/clock must be a function/),
      expect.stringMatching(/endedReplyGraceMs expected an integer of milliseconds from 30000/),
    ]);
  });

  it('announces a write to the watchers of every store over the storage as it commits, with no poll', async () => {
    const heard = await runInDurableObject(freshObject(), async (object, state) => {
      const store = object.stores[0] as DurableObjectContextStore;
      const other = new DurableObjectContextStore(state.storage);
      await store.openChat({ chatId: 'c1', userId: 'ada' });
      const notices: string[] = [];
      const first = new Promise<void>((resolve) => {
        other.watchChat('c1', (change) => {
          notices.push(change.type === 'chunks' ? `chunks:${change.chunkCount}` : change.type);
          resolve();
        });
      });
      await first;
      const atFirstNotice = notices.length;
      // The write's notice is delivered inside the call, before its promise is even awaited:
      // the object is the storage's one writer, so the write itself is the feed.
      const saving = store.commit({
        chatId: 'c1',
        branch: 'main',
        expectedHeadId: null,
        messages: [message('q1', 'question')],
        startReply: { replyId: 'r1', owner: 'writer', leaseMs: 60_000 },
      });
      const duringCommit = notices.slice(atFirstNotice);
      await saving;
      const appending = store.appendReplyChunks({
        chatId: 'c1',
        replyId: 'r1',
        owner: 'writer',
        from: 0,
        chunks: ['a', 'b'],
        leaseMs: 60_000,
      });
      const duringAppend = notices.slice(atFirstNotice + duringCommit.length);
      await appending;
      // A write that is refused writes nothing and announces nothing.
      const count = notices.length;
      const refused = await store
        .appendReplyChunks({
          chatId: 'c1',
          replyId: 'r1',
          owner: 'impostor',
          from: 2,
          chunks: ['x'],
          leaseMs: 1,
        })
        .then(
          () => 'written',
          (error: unknown) => (error as Error).name,
        );
      await other.close();
      return { duringCommit, duringAppend, refused, afterRefusal: notices.length - count };
    });
    expect(heard.duringCommit).toEqual(['chat']);
    expect(heard.duringAppend).toEqual(['chunks:2']);
    expect(heard.refused).toBe('LiveReplyLostError');
    expect(heard.afterRefusal).toBe(0);
  });

  it('keeps a live reply across the object’s restart: the next instance reads it and takes it over once its lease ran out', async () => {
    const stub = freshObject();
    await runInDurableObject(stub, async (object) => {
      const store = object.stores[0] as DurableObjectContextStore;
      await store.openChat({ chatId: 'c1', userId: 'ada' });
      const started = await store.commit({
        chatId: 'c1',
        branch: 'main',
        expectedHeadId: null,
        messages: [message('q1', 'question')],
        startReply: { replyId: 'r1', owner: 'first-instance', leaseMs: 1000 },
      });
      await store.appendReplyChunks({
        chatId: 'c1',
        replyId: 'r1',
        owner: 'first-instance',
        from: 0,
        chunks: ['a', 'b'],
        leaseMs: 1000,
      });
      return started.headMessageId;
    });
    // The writer's instance is gone (evicted, or the runtime restarted it mid-reply).
    await evictDurableObject(stub);
    const after = await runInDurableObject(stub, async (object, state) => {
      const leaseEnd = (await (object.stores[0] as DurableObjectContextStore).getLiveState('c1'))
        .replies[0]?.leaseExpiresAt as number;
      const early = new DurableObjectContextStore(state.storage, { clock: () => leaseEnd - 1 });
      const late = new DurableObjectContextStore(state.storage, { clock: () => leaseEnd });
      const tooEarly = await early.takeOverReply({
        chatId: 'c1',
        replyId: 'r1',
        owner: 'second-instance',
        leaseMs: 1000,
      });
      const taken = await late.takeOverReply({
        chatId: 'c1',
        replyId: 'r1',
        owner: 'second-instance',
        leaseMs: 1000,
      });
      await late.commit({
        chatId: 'c1',
        branch: 'main',
        expectedHeadId: 'q1',
        messages: [
          {
            id: 'r1',
            message: { id: 'r1', role: 'assistant', parts: [{ type: 'text', text: 'ab' }] },
          },
        ],
        endReply: { replyId: 'r1', owner: 'second-instance' },
      });
      const liveState = await late.getLiveState('c1');
      return {
        tooEarly,
        taken: taken === null ? null : { owner: taken.record.owner, chunks: taken.chunks },
        live: liveState.replies.length,
        saved: (await late.getMessage({ chatId: 'c1', messageId: 'r1' }))?.message.parts,
      };
    });
    expect(after.tooEarly).toBeNull();
    expect(after.taken).toEqual({ owner: 'second-instance', chunks: ['a', 'b'] });
    expect(after.live).toBe(0);
    expect(after.saved).toEqual([{ type: 'text', text: 'ab' }]);
  });

  it('describes itself for logs without the storage', async () => {
    const description = await runInDurableObject(freshObject(), (object) =>
      JSON.stringify(object.stores[0]),
    );
    expect(JSON.parse(description)).toEqual({
      store: 'durable-object',
      schemaVersion: 3,
      closed: false,
    });
  });

  it('indexes for search lazily: a save writes nothing to the index, a search what changed, a delete removes it', async () => {
    const counts = await runInDurableObject(freshObject(), async (object, state) => {
      const store = object.stores[0] as DurableObjectContextStore;
      const indexed = (): number =>
        Number(
          state.storage.sql.exec('SELECT count(*) AS n FROM ctxgraph_message_search').toArray()[0]
            ?.n,
        );
      const { branch } = await store.openChat({ chatId: 'c1', userId: 'ada' });
      await store.append({
        chatId: 'c1',
        branch: branch.name,
        messages: [message('m1', 'lazy words'), message('m2', 'more lazy words')],
      });
      const afterSave = indexed();
      const first = await store.searchMessages({ userId: 'ada', query: 'lazy' });
      const afterSearch = indexed();
      await store.append({
        chatId: 'c1',
        branch: branch.name,
        messages: [message('m3', 'lazy again')],
      });
      const afterSecondSave = indexed();
      // The same message id on the same path: replaced in place, found by its new text only.
      await store.append({
        chatId: 'c1',
        branch: branch.name,
        messages: [message('m3', 'eager now')],
      });
      const second = await store.searchMessages({ userId: 'ada', query: 'lazy' });
      const replaced = await store.searchMessages({ userId: 'ada', query: 'eager' });
      const afterSecondSearch = indexed();
      await store.deleteChat('c1');
      return {
        afterSave,
        afterSearch,
        afterSecondSave,
        afterSecondSearch,
        afterDelete: indexed(),
        first: first.items.map((hit) => hit.messageId),
        second: second.items.map((hit) => hit.messageId),
        replaced: replaced.items.map((hit) => hit.messageId),
      };
    });
    expect(counts).toEqual({
      afterSave: 0,
      afterSearch: 2,
      afterSecondSave: 2,
      afterSecondSearch: 3,
      afterDelete: 0,
      first: ['m1', 'm2'],
      second: ['m1', 'm2'],
      replaced: ['m3'],
    });
  });
});
