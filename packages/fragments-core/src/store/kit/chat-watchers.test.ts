import { describe, expect, it } from 'vitest';
import type { ChatChange } from '../live-replies';
import { ChangePoller, ChatWatchers, type PolledChat, type PollTimers } from './chat-watchers';

/** Timers run by hand: a test fires the pending one when it wants, so nothing depends on time. */
function manualTimers() {
  const pending = new Map<number, { callback: () => void; milliseconds: number }>();
  let next = 0;
  const timers: PollTimers = {
    setTimeout: (callback, milliseconds) => {
      next += 1;
      pending.set(next, { callback, milliseconds });
      return next;
    },
    clearTimeout: (handle) => {
      pending.delete(handle as unknown as number);
    },
  };
  return {
    timers,
    pending,
    /** Fires every pending timer once and lets the reads they start settle. */
    async fire(): Promise<void> {
      const due = [...pending.entries()];
      pending.clear();
      for (const [, timer] of due) timer.callback();
      for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
    },
  };
}

describe('ChatWatchers', () => {
  it('starts its source with the first watcher and stops it with the last, per chat and overall', () => {
    const events: string[] = [];
    const watchers = new ChatWatchers({
      start: () => events.push('start'),
      stop: () => events.push('stop'),
      added: (chatId) => events.push(`added ${chatId}`),
      removed: (chatId) => events.push(`removed ${chatId}`),
    });
    const a1 = watchers.watch('a', () => {});
    const a2 = watchers.watch('a', () => {});
    const b = watchers.watch('b', () => {});
    expect(watchers.chats()).toEqual(['a', 'b']);
    a1();
    a1();
    b();
    expect(watchers.active).toBe(true);
    a2();
    expect(watchers.active).toBe(false);
    const again = watchers.watch('c', () => {});
    watchers.close();
    again();
    expect(events).toEqual([
      'start',
      'added a',
      'added b',
      'removed b',
      'removed a',
      'stop',
      'start',
      'added c',
      'stop',
    ]);
    // Closed: nothing subscribes, nothing starts.
    watchers.watch('d', () => {})();
    expect(events.at(-1)).toBe('stop');
  });

  it('delivers a notice to the chat’s watchers only, each subscription on its own', () => {
    const watchers = new ChatWatchers();
    const got: string[] = [];
    const listener = (change: ChatChange) => got.push(`${change.chatId}:${change.type}`);
    const first = watchers.watch('a', listener);
    watchers.watch('a', listener);
    watchers.watch('b', (change) => got.push(`other ${change.chatId}`));
    watchers.emit({ type: 'chat', chatId: 'a' });
    first();
    watchers.emit({ type: 'chunks', chatId: 'a', replyId: 'r', chunkCount: 2 });
    watchers.emit({ type: 'chat', chatId: 'z' });
    expect(got).toEqual(['a:chat', 'a:chat', 'a:chunks']);
  });

  it('a listener that throws does not keep the others from the notice', () => {
    const errors: unknown[] = [];
    const watchers = new ChatWatchers(undefined, {
      onListenerError: (error) => errors.push(error),
    });
    const got: number[] = [];
    watchers.watch('a', () => {
      throw new Error('listener failed');
    });
    watchers.watch('a', () => got.push(1));
    watchers.emit({ type: 'chat', chatId: 'a' });
    expect(got).toEqual([1]);
    expect(errors).toEqual([new Error('listener failed')]);
  });

  it('a listener that unsubscribes another during a notice stops that one at once', () => {
    const watchers = new ChatWatchers();
    const got: string[] = [];
    let second = (): void => {};
    watchers.watch('a', () => {
      got.push('first');
      second();
    });
    second = watchers.watch('a', () => got.push('second'));
    watchers.emit({ type: 'chat', chatId: 'a' });
    expect(got).toEqual(['first']);
  });
});

describe('ChangePoller', () => {
  function setup(noticeFirstRead: boolean | (() => boolean) = true) {
    const clock = manualTimers();
    const notices: ChatChange[] = [];
    let state = new Map<string, PolledChat>();
    const reads: { chatIds: readonly string[]; fresh: boolean }[] = [];
    let answer: 'state' | 'unchanged' | 'fail' = 'state';
    const errors: unknown[] = [];
    let poller: ChangePoller | undefined;
    const watchers = new ChatWatchers({
      start: () => poller?.start(),
      stop: () => poller?.stop(),
      added: (chatId) => poller?.added(chatId),
      removed: (chatId) => poller?.removed(chatId),
    });
    poller = new ChangePoller({
      watchers,
      read: async (chatIds, fresh) => {
        reads.push({ chatIds, fresh });
        if (answer === 'fail') throw new Error('read failed');
        return answer === 'unchanged' ? undefined : state;
      },
      intervalMs: 100,
      timers: clock.timers,
      noticeFirstRead,
      onError: (error) => errors.push(error),
    });
    return {
      clock,
      notices,
      reads,
      errors,
      watchers,
      poller,
      watch: (chatId: string) => watchers.watch(chatId, (change) => notices.push(change)),
      set: (chatId: string, stamp: string, replies: [string, number][] = []) => {
        state = new Map(state);
        state.set(chatId, { stamp, replies });
      },
      drop: (chatId: string) => {
        state = new Map(state);
        state.delete(chatId);
      },
      answer: (next: typeof answer) => {
        answer = next;
      },
    };
  }

  it('sends a first notice after the first read, then one per changed stamp or chunk count', async () => {
    const test = setup();
    test.set('a', 'v1');
    test.watch('a');
    expect(test.clock.pending.size).toBe(1);
    await test.clock.fire();
    expect(test.notices).toEqual([{ type: 'chat', chatId: 'a' }]);
    expect(test.reads).toEqual([{ chatIds: ['a'], fresh: true }]);
    expect([...test.clock.pending.values()].map((timer) => timer.milliseconds)).toEqual([100]);
    await test.clock.fire();
    expect(test.notices).toHaveLength(1);
    test.set('a', 'v2', [['r', 0]]);
    await test.clock.fire();
    test.set('a', 'v2', [['r', 3]]);
    await test.clock.fire();
    test.drop('a');
    await test.clock.fire();
    expect(test.notices).toEqual([
      { type: 'chat', chatId: 'a' },
      { type: 'chat', chatId: 'a' },
      { type: 'chunks', chatId: 'a', replyId: 'r', chunkCount: 3 },
      { type: 'chat', chatId: 'a' },
    ]);
  });

  it('a reader that knows nothing changed is not compared; a new chat forces a read soon', async () => {
    const test = setup();
    test.set('a', 'v1');
    test.watch('a');
    await test.clock.fire();
    test.answer('unchanged');
    test.set('a', 'v2');
    await test.clock.fire();
    expect(test.notices).toHaveLength(1);
    test.answer('state');
    test.watch('b');
    expect([...test.clock.pending.values()].map((timer) => timer.milliseconds)).toEqual([0]);
    await test.clock.fire();
    expect(test.reads.at(-1)).toEqual({ chatIds: ['a', 'b'], fresh: true });
    expect(test.notices).toEqual([
      { type: 'chat', chatId: 'a' },
      { type: 'chat', chatId: 'a' },
      { type: 'chat', chatId: 'b' },
    ]);
  });

  it('a chunk count the store announced itself is not announced again', async () => {
    const test = setup();
    test.set('a', 'v1', [['r', 1]]);
    test.watch('a');
    await test.clock.fire();
    test.poller.noteChunks('a', 'r', 4);
    test.set('a', 'v1', [['r', 4]]);
    await test.clock.fire();
    expect(test.notices).toEqual([{ type: 'chat', chatId: 'a' }]);
    expect(test.poller.seen('a')).toBe(true);
    expect(test.poller.seen('b')).toBe(false);
  });

  it('without first-read notices (a listener sends them), the first read is only a baseline', async () => {
    let listening = false;
    const test = setup(() => listening);
    test.set('a', 'v1');
    test.watch('a');
    await test.clock.fire();
    expect(test.notices).toEqual([]);
    listening = true;
    test.watch('b');
    await test.clock.fire();
    expect(test.notices).toEqual([{ type: 'chat', chatId: 'b' }]);
  });

  it('a failed read is reported and the poll goes on', async () => {
    const test = setup();
    test.set('a', 'v1');
    test.watch('a');
    test.answer('fail');
    await test.clock.fire();
    expect(test.errors).toEqual([new Error('read failed')]);
    expect(test.clock.pending.size).toBe(1);
    test.answer('state');
    await test.clock.fire();
    expect(test.notices).toEqual([{ type: 'chat', chatId: 'a' }]);
  });

  it('stops with the last watcher: no timer is left, and a read under way is not compared', async () => {
    const test = setup();
    test.set('a', 'v1');
    const stop = test.watch('a');
    const due = [...test.clock.pending.values()];
    test.clock.pending.clear();
    // The read starts, then the watcher leaves before it settles.
    for (const timer of due) timer.callback();
    stop();
    for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
    expect(test.notices).toEqual([]);
    expect(test.clock.pending.size).toBe(0);
    expect(test.poller.seen('a')).toBe(false);
  });

  it('a watcher that comes back while the last read of the stopped poll is under way is polled', async () => {
    // The store's last watcher left (the poll stopped) and a new one came (the poll started
    // again) while a read was still out: that read is not compared, and the poll goes on from
    // a read of its own. It used to stop for good, so the new watcher got no notice again.
    const clock = manualTimers();
    const notices: ChatChange[] = [];
    let state = new Map<string, PolledChat>([['a', { stamp: 'v1', replies: [] }]]);
    const held: (() => void)[] = [];
    let hold = true;
    let poller: ChangePoller | undefined;
    const watchers = new ChatWatchers({
      start: () => poller?.start(),
      stop: () => poller?.stop(),
      added: (chatId) => poller?.added(chatId),
      removed: (chatId) => poller?.removed(chatId),
    });
    poller = new ChangePoller({
      watchers,
      read: async () => {
        if (hold) await new Promise<void>((release) => held.push(release));
        return state;
      },
      intervalMs: 100,
      timers: clock.timers,
    });
    const stop = watchers.watch('a', (change) => notices.push(change));
    await clock.fire();
    expect(held).toHaveLength(1);
    stop();
    watchers.watch('a', (change) => notices.push(change));
    hold = false;
    await clock.fire();
    for (const release of held.splice(0)) release();
    for (let turn = 0; turn < 5; turn += 1) await Promise.resolve();
    await clock.fire();
    expect(notices).toEqual([{ type: 'chat', chatId: 'a' }]);
    expect(poller.seen('a')).toBe(true);
    // And it goes on polling: a later change is a notice.
    state = new Map([['a', { stamp: 'v2', replies: [] }]]);
    await clock.fire();
    expect(notices).toEqual([
      { type: 'chat', chatId: 'a' },
      { type: 'chat', chatId: 'a' },
    ]);
  });
});
