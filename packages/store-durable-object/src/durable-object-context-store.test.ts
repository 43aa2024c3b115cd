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
    expect(first).toEqual({ from: 0, to: 2, applied: ['initial', 'live replies'] });

    // A new instance of the object (the platform evicts idle objects): same storage, no step run.
    await evictDurableObject(stub);
    const second = await runInDurableObject(stub, async (object) => {
      const store = object.stores[0] as DurableObjectContextStore;
      const chain = await store.getChain({ chatId: 'c1', headMessageId: 'm1' });
      return { migration: store.migration, texts: chain.nodes.map((node) => node.message.parts) };
    });
    expect(second.migration).toEqual({ from: 2, to: 2, applied: [] });
    expect(second.texts).toEqual([[{ type: 'text', text: 'kept across eviction' }]]);
  });

  it('refuses tables newer than its code with SchemaVersionError', async () => {
    const error = await runInDurableObject(freshObject(), (_object, state) => {
      state.storage.sql.exec(
        'INSERT INTO ctxgraph_migrations (version, name, applied_at) VALUES (3, ?, 0)',
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
    expect((error as Error).message).toMatch(/schema version 3, newer than this code's 2/);
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

  it('describes itself for logs without the storage', async () => {
    const description = await runInDurableObject(freshObject(), (object) =>
      JSON.stringify(object.stores[0]),
    );
    expect(JSON.parse(description)).toEqual({
      store: 'durable-object',
      schemaVersion: 2,
      closed: false,
    });
  });
});
