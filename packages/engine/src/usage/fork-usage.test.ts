import { assistantText, user } from '@ctxgraph/codecs';
import { afterAll, describe, expect, it } from 'vitest';
import { storePairs } from '../__fixtures__/store-pairs';
import { LineRenderer } from '../__fixtures__/test-kit';
import { ContextEngine } from '../context-engine';
import { withUsage } from './message-usage';

// Forks count spend once (issue #39): a chat's usage counts each provider call once, whatever its
// branches share (forks, message versions, a client's copies, a checkpoint's restore, a reply
// continued in place); each branch's usage counts what its own path cost.

const renderer = new LineRenderer();
const { pairs: kinds, closeAll } = storePairs('fork-usage');
afterAll(closeAll);

const newChatId = (): string => `fork-usage-${Math.random().toString(36).slice(2)}`;

/** A reply with the usage of one provider call: `input` tokens in, a tenth of that out. */
const reply = (id: string, input: number) =>
  withUsage(assistantText(`reply ${id}`, { id }), {
    usage: { inputTokens: input, outputTokens: input / 10 },
    modelId: 'claude-sonnet-4',
  });

describe.each(kinds)('usage across forks (%s)', (_label, handles) => {
  it('counts each provider call once per chat, and each branch by its own path', async () => {
    const [store, other] = handles();
    const chatId = newChatId();
    const engine = () => new ContextEngine({ store, chatId, userId: 'u', renderer });
    // The calls made, by reply id: the truth every total is checked against.
    const calls = new Map<string, number>();
    const call = (id: string, input: number) => {
      calls.set(id, (calls.get(id) ?? 0) + input);
      return reply(id, input);
    };

    // main: u1 → a1 → u2 → a2, checkpoint at a2.
    const main = engine();
    main.set(user('hello', { id: 'u1' }), call('a1', 100), user('second', { id: 'u2' }));
    main.set(call('a2', 200));
    await main.save();
    await main.checkpoint('after-a2');

    // btw: a branch at the head (shares u1…a2), a turn on it.
    const aside = await main.btw();
    const onAside = engine();
    await onAside.switchBranch(aside.name);
    onAside.set(user('aside', { id: 'u3' }), call('a3', 300));
    await onAside.save();

    // rewind to a1 and edit u2 (same id: a version u2~2), answered by a new call.
    const rewound = engine();
    await rewound.rewind('a1');
    rewound.set(user('second, edited', { id: 'u2' }), call('a2b', 150));
    await rewound.save();
    expect(rewound.nodeIdOf('u2')).toBe('u2~2');

    // A request that names a1 (continueFrom, another store object) and sends a client's copy of
    // a2, a reply recorded on main: off this path it is a version without usage, not a second a2.
    const request = new ContextEngine({ store: other, chatId, userId: 'u', renderer });
    await request.continueFrom('a1', { activate: false });
    request.set(
      user('second, again', { id: 'u2' }),
      assistantText('reply a2', { id: 'a2' }),
      user('and then', { id: 'u4' }),
      call('a4', 120),
    );
    await request.save();

    // A client echoes main's whole conversation back with a new turn: the copies replace the
    // nodes in place and keep what the engine recorded, adding nothing.
    const echo = engine();
    await echo.switchBranch('main');
    echo.set(
      user('hello', { id: 'u1' }),
      assistantText('reply a1', { id: 'a1' }),
      user('second', { id: 'u2' }),
      assistantText('reply a2', { id: 'a2' }),
      user('third', { id: 'u5' }),
      call('a5', 250),
    );
    await echo.save();

    // A reply continued in place (a client-side tool result) by an engine that has not read the
    // branch yet: one message, two calls, on a node every branch shares.
    const continued = engine();
    await continued.switchBranch('main');
    continued.set(
      withUsage(assistantText('reply a1, continued', { id: 'a1' }), {
        usage: { inputTokens: 40, outputTokens: 4 },
        modelId: 'claude-sonnet-4',
        add: true,
      }),
    );
    await continued.save();
    calls.set('a1', (calls.get('a1') ?? 0) + 40);

    // restore the checkpoint: a branch at a2, a turn on it.
    const restored = engine();
    await restored.restore('after-a2');
    restored.set(user('restored', { id: 'u6' }), call('a6', 500));
    await restored.save();

    const callCount = calls.size + 1; // a1 took two calls
    const inputOf = (...ids: string[]) => ids.reduce((sum, id) => sum + (calls.get(id) ?? 0), 0);

    // The chat: every call once, from a fresh engine on the other store object.
    const fresh = new ContextEngine({ store: other, chatId, userId: 'u', renderer });
    const chat = await fresh.usage({ scope: 'chat' });
    expect(chat.calls).toBe(callCount);
    expect(chat.inputTokens).toBe(inputOf(...calls.keys()));
    expect(chat.outputTokens).toBe(inputOf(...calls.keys()) / 10);
    expect(chat.byModel['claude-sonnet-4']?.calls).toBe(callCount);
    expect((await fresh.inspect()).usage.chat).toEqual(chat);

    // Each branch: what its own path cost, shared calls included.
    const branchUsage = async (name: string) => {
      const reader = new ContextEngine({ store: other, chatId, userId: 'u', renderer });
      await reader.switchBranch(name);
      return reader.usage();
    };
    const paths: Record<string, string[]> = {
      main: ['a1', 'a2', 'a5'],
      [aside.name]: ['a1', 'a2', 'a3'],
      [restored.branch]: ['a1', 'a2', 'a6'],
      [rewound.branch]: ['a1', 'a2b'],
      [request.branch]: ['a1', 'a4'],
    };
    expect(new Set(Object.keys(paths)).size).toBe(5);
    for (const [name, ids] of Object.entries(paths)) {
      const totals = await branchUsage(name);
      expect(totals.inputTokens, name).toBe(inputOf(...ids));
      expect(totals.calls, name).toBe(ids.length + 1); // a1's two calls are on every path
    }
  });
});
