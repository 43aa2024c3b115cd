// The cycle's general read (`cycle.read(chatId, { userId }, task)`): the chat's warm engine, held
// by one task at a time, checked for its owner before the task runs, kept warm after a task that
// went well and dropped after one that failed. messages / versions / openVersion read through it.
import { user } from '@ctxgraph/codecs';
import type { ContextEngine } from '@ctxgraph/engine';
import { ChatNotFoundError, type ContextStore, OwnershipError } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { describe, expect, it } from 'vitest';
import { ChatNotFoundForUserError } from '../errors';
import { createChatCycle } from './chat-cycle';

const engine = { renderer: new XmlRenderer() };

/** A real store whose method calls are recorded by name, and whose next write can be refused. */
function counted(store: ContextStore = new InMemoryContextStore()) {
  const calls: string[] = [];
  let refuseWrite: Error | undefined;
  const wrapped = new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...input: unknown[]) => {
        calls.push(String(property));
        if (refuseWrite !== undefined && (property === 'commit' || property === 'append')) {
          const error = refuseWrite;
          refuseWrite = undefined;
          return Promise.reject(error);
        }
        return (value as (...input: unknown[]) => unknown).apply(target, input);
      };
    },
  });
  return {
    store: wrapped,
    calls,
    reset: () => {
      calls.length = 0;
    },
    refuseNextWrite: (error: Error) => {
      refuseWrite = error;
    },
  };
}

/** The engine, once it opened its chat (an engine that never did is not kept warm). */
async function opened(engine: ContextEngine): Promise<ContextEngine> {
  await engine.resolve();
  return engine;
}

/** A promise held open until `open()`. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe('cycle.read', () => {
  it('runs on the chat’s warm engine: a warm read checks the chat and reads the branch head', async () => {
    const counting = counted();
    await counting.store.openChat({ chatId: 'warm', userId: 'alice' });
    const cycle = createChatCycle({ store: counting.store, engine });
    const first = await cycle.read('warm', { userId: 'alice' }, opened);
    await cycle.read('warm', { userId: 'alice' }, (each) => each.resolve());
    counting.reset();
    const second = await cycle.read('warm', { userId: 'alice' }, opened);
    expect(second === first).toBe(true);
    // The chat read once (owner, and the chat the engine was opened on), then the head.
    expect(counting.calls).toEqual(['getChat', 'getHead']);
  });

  it('refuses a chat that does not exist without creating it, and keeps nothing', async () => {
    const counting = counted();
    const cycle = createChatCycle({ store: counting.store, engine });
    let ran = false;
    const refused = await cycle
      .read('missing', { userId: 'alice' }, () => {
        ran = true;
      })
      .catch((error: unknown) => error);
    expect(ChatNotFoundError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).toContain('missing');
    expect(ran).toBe(false);
    expect(await counting.store.getChat('missing')).toBeNull();
    // The cycle's own reads answer it as unknown for this user.
    await expect(cycle.messages('missing', { userId: 'alice' })).rejects.toSatisfy((error) =>
      ChatNotFoundForUserError.isInstance(error),
    );
  });

  it('refuses another user before the task runs, with a cold engine or a warm one', async () => {
    const { store } = counted();
    await store.openChat({ chatId: 'owned', userId: 'alice' });
    const cycle = createChatCycle({ store, engine });
    let ran = 0;
    const intrude = () =>
      cycle.read('owned', { userId: 'mallory' }, () => {
        ran += 1;
      });
    expect(OwnershipError.isInstance(await intrude().catch((error: unknown) => error))).toBe(true);
    await cycle.read('owned', { userId: 'alice' }, async (each) => {
      each.set(user('mine'));
      await each.save();
    });
    const refused = await intrude().catch((error: unknown) => error);
    expect(OwnershipError.isInstance(refused)).toBe(true);
    expect((refused as Error).message).toContain('mallory');
    expect(ran).toBe(0);
    await expect(cycle.messages('owned', { userId: 'mallory' })).rejects.toSatisfy((error) =>
      ChatNotFoundForUserError.isInstance(error),
    );
    const messages = await cycle.messages('owned', { userId: 'alice' });
    expect(messages.map((message) => message.role)).toEqual(['user']);
  });

  it('drops the engine of a task that failed, with what it left pending', async () => {
    const counting = counted();
    await counting.store.openChat({ chatId: 'refused', userId: 'alice' });
    const cycle = createChatCycle({ store: counting.store, engine });
    let failed: ContextEngine | undefined;
    counting.refuseNextWrite(new Error('the disk is full'));
    await expect(
      cycle.read('refused', { userId: 'alice' }, async (each) => {
        failed = each;
        each.set(user('refused'));
        await each.save();
      }),
    ).rejects.toThrow('the disk is full');
    const { messages, engine: next } = await cycle.read(
      'refused',
      { userId: 'alice' },
      async (each) => {
        each.set(user('accepted'));
        await each.save();
        return { ...(await each.resolve()), engine: each };
      },
    );
    expect(next === failed).toBe(false);
    expect(messages.map((message) => message.parts)).toEqual([
      [{ type: 'text', text: 'accepted' }],
    ]);
  });

  it('never shares an engine: a read while another holds the chat’s engine gets its own', async () => {
    const { store } = counted();
    await store.openChat({ chatId: 'busy', userId: 'alice' });
    const cycle = createChatCycle({ store, engine });
    const warm = await cycle.read('busy', { userId: 'alice' }, opened);
    const held = gate();
    let holding: ContextEngine | undefined;
    const long = cycle.read('busy', { userId: 'alice' }, async (each) => {
      holding = each;
      await held.promise;
    });
    const meanwhile = await cycle.read('busy', { userId: 'alice' }, opened);
    held.open();
    await long;
    expect(holding === warm).toBe(true);
    expect(meanwhile === warm).toBe(false);
  });

  it('keeps warm engines for `warmEngines` chats, the least recently used dropped first', async () => {
    const { store } = counted();
    for (const chatId of ['c1', 'c2', 'c3']) await store.openChat({ chatId, userId: 'alice' });
    const cycle = createChatCycle({ store, engine, warmEngines: 2 });
    const touch = (chatId: string) => cycle.read(chatId, { userId: 'alice' }, opened);
    const first = await touch('c1');
    const second = await touch('c2');
    expect((await touch('c1')) === first).toBe(true);
    await touch('c3');
    expect((await touch('c1')) === first).toBe(true);
    expect((await touch('c2')) === second).toBe(false);
  });

  it('a chat deleted and made again gets a new engine, never the old chat’s', async () => {
    const { store } = counted();
    await store.openChat({ chatId: 'again', userId: 'alice' });
    const cycle = createChatCycle({ store, engine });
    const old = await cycle.read('again', { userId: 'alice' }, async (each) => {
      each.set(user('old chat'));
      await each.save();
      return each;
    });
    await store.deleteChat('again');
    await expect(cycle.read('again', { userId: 'alice' }, () => 'ran')).rejects.toSatisfy((error) =>
      ChatNotFoundError.isInstance(error),
    );
    await store.openChat({ chatId: 'again', userId: 'alice' });
    const { messages, engine: fresh } = await cycle.read(
      'again',
      { userId: 'alice' },
      async (each) => ({ ...(await each.resolve()), engine: each }),
    );
    expect(fresh === old).toBe(false);
    expect(messages).toEqual([]);
  });

  it('messages, versions and openVersion read through the same warm engine', async () => {
    const { store } = counted();
    await store.openChat({ chatId: 'reads', userId: 'alice' });
    const cycle = createChatCycle({ store, engine });
    const warm = await cycle.read('reads', { userId: 'alice' }, async (each) => {
      each.set(user('hi', { id: 'q1' }));
      await each.save();
      return each;
    });
    const versions = await cycle.versions('reads', 'q1', { userId: 'alice' });
    expect(versions.map((version) => version.messageId)).toEqual(['q1']);
    const shown = await cycle.openVersion('reads', versions[0]?.leafNodeId as string, {
      userId: 'alice',
    });
    expect(shown.map((message) => message.id)).toEqual(['q1']);
    expect((await cycle.messages('reads', { userId: 'alice' })).map((each) => each.id)).toEqual([
      'q1',
    ]);
    expect((await cycle.read('reads', { userId: 'alice' }, opened)) === warm).toBe(true);
  });
});
