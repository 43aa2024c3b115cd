import { user } from '@ctxgraph/codecs';
import {
  ContextConflictError,
  type ContextStore,
  fragment,
  hint,
  role,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { beforeEach, describe, expect, it } from 'vitest';
import { LineRenderer, overrideStore } from './__fixtures__/test-kit';
import { ContextEngine } from './context-engine';

const renderer = new LineRenderer();
let store: ContextStore;
let counter = 0;
const newChatId = (): string => {
  counter += 1;
  return `lane-${Date.now()}-${counter}`;
};
const engine = (chatId: string): ContextEngine =>
  new ContextEngine({ store, chatId, userId: 'u', renderer });

beforeEach(() => {
  store = new InMemoryContextStore();
});

describe('the context lane', () => {
  it('saves the context fragments with the chat and loads them in a new engine', async () => {
    const chatId = newChatId();
    const first = engine(chatId).set(role('You are terse.'), hint('Cite sources.'));
    const saved = await first.saveContext();
    expect(saved.revision).toBe(1);
    expect(saved.fragments).toEqual([
      { type: 'role', text: 'You are terse.' },
      { type: 'hint', text: 'Cite sources.' },
    ]);
    const second = engine(chatId);
    const loaded = await second.loadContext();
    expect(loaded.map((entry) => entry.name)).toEqual(['role', 'hint']);
    expect(second.render()).toBe(first.render());
  });

  it('loadContext() applies in call order: fragments set after it stay on top', async () => {
    const chatId = newChatId();
    await engine(chatId).set(role('stored role')).saveContext();
    const other = engine(chatId).set(hint('replaced by the load'));
    const loading = other.loadContext();
    other.set(hint('set after the load was called'));
    const resolving = other.resolve();
    await loading;
    expect((await resolving).systemPrompt).toBe(
      'role: stored role\nhint: set after the load was called',
    );
  });

  it('refuses to overwrite a revision another writer saved, and writes nothing', async () => {
    const chatId = newChatId();
    await engine(chatId).set(hint('v1')).saveContext();
    const a = engine(chatId);
    const b = engine(chatId);
    await a.loadContext();
    await b.loadContext();
    await a.replaceContext([hint('from a')]).saveContext();
    const error = await b
      .replaceContext([hint('from b')])
      .saveContext()
      .catch((caught: unknown) => caught);
    expect(ContextConflictError.isInstance(error)).toBe(true);
    expect(await engine(chatId).loadContext()).toEqual([hint('from a')]);
    await b.loadContext();
    expect((await b.replaceContext([hint('from b')]).saveContext()).revision).toBe(3);
  });

  it('replaceContext() takes only context fragments; earlier calls keep their lane', async () => {
    const chatId = newChatId();
    const a = engine(chatId).set(hint('old'));
    const resolving = a.resolve();
    a.replaceContext([hint('new')]);
    expect((await resolving).systemPrompt).toBe('hint: old');
    expect(a.render()).toBe('hint: new');
    expect(() => a.replaceContext([user('hi')] as never)).toThrow(ValidationError);
    expect(() => a.replaceContext('x' as never)).toThrow('fragments must be an array');
  });

  it('says clearly when a fragment has no serialized form', async () => {
    const error = await engine(newChatId())
      .set(fragment('custom', { anything: 1 }))
      .saveContext()
      .catch((caught: unknown) => caught);
    expect(ValidationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /context fragment 0 \("custom"\) cannot be serialized/,
    );
  });

  it('is required of every store: the engine refuses a store without it when it is made', () => {
    const partial = overrideStore(new InMemoryContextStore(), {
      getContext: undefined,
      saveContext: undefined,
    } as never);
    const error = (() => {
      try {
        return new ContextEngine({ store: partial, chatId: newChatId(), userId: 'u', renderer });
      } catch (caught) {
        return caught;
      }
    })();
    expect(ValidationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(
      'store is not a whole v1 ContextStore: it has no getContext(), saveContext().',
    );
    expect((error as ValidationError).issues.map((issue) => issue.path)).toEqual([
      'store.getContext',
      'store.saveContext',
    ]);
  });
});
