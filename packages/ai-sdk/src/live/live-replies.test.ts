import type { ContextStore } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { streamText, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, describe, expect, it } from 'vitest';
import { textOf } from '../cycle/__fixtures__/cycle-test-kit';
import { type ChatCycle, createChatCycle } from '../cycle/chat-cycle';

// Live replies across processes: two cycles on two handles of one store hold no state in common
// but the store, as two server processes would. Nothing here waits for an amount of time: each
// step waits for what it needs to see (a chunk, an event, a save).

const environment = (globalThis as { process?: { env: Record<string, string | undefined> } })
  .process?.env;
const databaseUrl = environment?.DATABASE_URL;

const opened: ContextStore[] = [];
const sqliteFiles: string[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
  const fs = (await import('node:fs' as string)) as {
    rmSync(path: string, options: { force: boolean }): void;
  };
  for (const path of sqliteFiles)
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${path}${suffix}`, { force: true });
});

/** A store clock the test moves by hand (leases run out when the test says so). */
interface Clock {
  now: number;
}

/** Two handles on one database, with one clock: two server processes. */
const storePairs: [string, (clock: Clock) => [ContextStore, ContextStore]][] = [
  [
    'memory',
    (clock) => {
      const store = new InMemoryContextStore({ clock: () => clock.now });
      return [store, store];
    },
  ],
  [
    'SQLite file, two handles',
    (clock) => {
      const path = `/tmp/ctxgraph-ai-sdk-live-${Math.random().toString(36).slice(2)}.db`;
      sqliteFiles.push(path);
      const first = new SqliteContextStore({ path, clock: () => clock.now });
      const second = new SqliteContextStore({ path, clock: () => clock.now });
      opened.push(first, second);
      return [first, second];
    },
  ],
];
if (databaseUrl !== undefined) {
  storePairs.push([
    'PostgreSQL, two handles',
    (clock) => {
      const make = () =>
        new PostgresContextStore({
          connectionString: databaseUrl,
          schema: 'ctxgraph_ai_sdk_live',
          clock: () => clock.now,
        });
      const first = make();
      const second = make();
      opened.push(first, second);
      return [first, second];
    },
  ]);
}

let counter = 0;
const newChatId = (name: string): string => {
  counter += 1;
  return `${name}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
};
const ask = (id: string, text: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});
const cycleOn = (store: ContextStore): ChatCycle =>
  createChatCycle({ store, engine: { renderer: new XmlRenderer() }, live: { flushMs: 5 } });

/**
 * A model the test writes: each call opens a text part, then streams what `say` gives it, until
 * `end` (or the call's abort). `called` resolves at each call.
 */
function handModel() {
  type Part =
    Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P>
      ? P
      : never;
  let current: ReadableStreamDefaultController<Part> | undefined;
  let aborted = 0;
  let called!: () => void;
  const started = new Promise<void>((resolve) => {
    called = resolve;
  });
  const model = new MockLanguageModelV3({
    doStream: async ({ abortSignal }) => {
      const stream = new ReadableStream<Part>({
        start(controller) {
          current = controller;
          controller.enqueue({ type: 'text-start', id: 't' });
          called();
          abortSignal?.addEventListener(
            'abort',
            () => {
              aborted += 1;
              controller.error(abortSignal.reason);
            },
            { once: true },
          );
        },
      });
      return { stream };
    },
  });
  return {
    model,
    started,
    say(delta: string) {
      current?.enqueue({ type: 'text-delta', id: 't', delta });
    },
    end() {
      current?.enqueue({ type: 'text-end', id: 't' });
      current?.enqueue({
        type: 'finish',
        finishReason: { unified: 'stop', raw: undefined },
        usage: {
          inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 2, text: 2, reasoning: undefined },
        },
      });
      current?.close();
    },
    get aborted() {
      return aborted;
    },
  };
}

/** Reads the server-sent events of a response as they come: JSON data, comments skipped. */
function sseReader(response: Response) {
  const reader = (response.body as ReadableStream<Uint8Array>)
    .pipeThrough(new TextDecoderStream() as unknown as TransformStream<Uint8Array, string>)
    .getReader();
  const seen: unknown[] = [];
  let buffer = '';
  let done = false;
  const next = async (): Promise<boolean> => {
    const read = await reader.read();
    if (read.done) {
      done = true;
      return false;
    }
    buffer += read.value;
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (event.startsWith('data: ') && event !== 'data: [DONE]')
        seen.push(JSON.parse(event.slice(6)));
      end = buffer.indexOf('\n\n');
    }
    return true;
  };
  return {
    seen,
    /** Reads until `predicate` holds for what was seen (or the stream ended). */
    async until(predicate: (seen: unknown[]) => boolean): Promise<unknown[]> {
      while (!predicate(seen) && !done) await next();
      return seen;
    },
    async toEnd(): Promise<unknown[]> {
      while (await next());
      return seen;
    },
    cancel: () => reader.cancel(),
  };
}

const textIn = (chunks: unknown[]): string =>
  chunks
    .map((chunk) => {
      const { type, delta } = chunk as { type: string; delta?: string };
      return type === 'text-delta' ? (delta ?? '') : '';
    })
    .join('');
const lastType = (chunks: unknown[]): string | undefined =>
  (chunks.at(-1) as { type?: string } | undefined)?.type;

/** Begins a turn on `cycle` and streams the hand model's reply; the client's stream is read to its end. */
async function startTurn(cycle: ChatCycle, chatId: string, messages: UIMessage[]) {
  const hand = handModel();
  const turn = await cycle.begin(
    { id: chatId, trigger: 'submit-message', messages },
    { userId: 'u' },
  );
  const response = turn.respond(
    streamText({ model: hand.model, messages: turn.messages, abortSignal: turn.abortSignal }),
  );
  const client = sseReader(response);
  const finished = client.toEnd();
  await hand.started;
  return { hand, turn, client, finished };
}

describe.each(storePairs)('live replies across processes (%s)', (_name, open) => {
  it('a reply is resumed from another process, and its events are seen there', async () => {
    const clock = { now: 1_000_000 };
    const [storeA, storeB] = open(clock);
    const [a, b] = [cycleOn(storeA), cycleOn(storeB)];
    const chatId = newChatId('resume');
    // The chat exists before the events stream opens (an unknown chat is refused).
    const first = await startTurn(a, chatId, [ask('q1', 'Hi')]);
    first.hand.say('Hello.');
    first.hand.end();
    await first.finished;
    const controller = new AbortController();
    const events = sseReader(await b.events(chatId, { userId: 'u', signal: controller.signal }));
    const [initial] = (await events.until((seen) => seen.length > 0)) as {
      version: number;
      live: string | null;
    }[];
    expect(initial?.live).toBeNull();

    const second = await startTurn(a, chatId, [
      ask('q1', 'Hi'),
      ...(await a.messages(chatId, { userId: 'u' })).slice(1),
      ask('q2', 'Again'),
    ]);
    const replyId = second.turn.replyId;
    await events.until((seen) =>
      seen.some((event) => (event as { live: string }).live === replyId),
    );
    second.hand.say('Hello ');
    const resumed = await b.resume(chatId, { userId: 'u' });
    expect(resumed.status).toBe(200);
    const follower = sseReader(resumed);
    await follower.until((seen) => textIn(seen) === 'Hello ');
    expect((follower.seen[0] as { type: string; messageId: string }).messageId).toBe(replyId);
    second.hand.say('world');
    await follower.until((seen) => textIn(seen) === 'Hello world');
    second.hand.end();
    const chunks = await follower.toEnd();
    expect(textIn(chunks)).toBe('Hello world');
    expect(lastType(chunks)).toBe('finish');
    await second.finished;
    const saved = await b.conversation(chatId, { userId: 'u' });
    expect(textOf(saved.messages.at(-1))).toBe('Hello world');
    expect(saved.outcomes).toEqual({});
    // `live: null` comes once the reply is saved; versions only grow.
    const after = (await events.until(
      (seen) => (seen.at(-1) as { live: unknown }).live === null,
    )) as {
      version: number;
    }[];
    const versions = after.map((event) => event.version);
    expect(versions).toEqual([...versions].sort((x, y) => x - y));
    controller.abort();
    await events.toEnd();
    expect((await b.resume(chatId, { userId: 'u' })).status).toBe(204);
  });

  it('a stop from another process stops the model; the reply is saved aborted, holding exactly the chunks readers got', async () => {
    const clock = { now: 1_000_000 };
    const [storeA, storeB] = open(clock);
    const [a, b] = [cycleOn(storeA), cycleOn(storeB)];
    const chatId = newChatId('stop');
    const turn = await startTurn(a, chatId, [ask('q1', 'Tell me')]);
    turn.hand.say('Partial ');
    turn.hand.say('answer');
    const follower = sseReader(await b.resume(chatId, { userId: 'u' }));
    await follower.until((seen) => textIn(seen) === 'Partial answer');
    expect(await b.stop(chatId, { userId: 'u' })).toEqual({ messageId: turn.turn.replyId });
    expect(turn.hand.aborted).toBe(1);
    const readers = [await turn.finished, await follower.toEnd()];
    const saved = await b.conversation(chatId, { userId: 'u' });
    expect(saved.outcomes).toEqual({ [turn.turn.replyId]: 'aborted' });
    for (const chunks of readers) expect(textIn(chunks)).toBe(textOf(saved.messages.at(-1)));
    expect(await b.stop(chatId, { userId: 'u' })).toBeNull();
    await expect(b.stop('no-such-chat', { userId: 'u' })).rejects.toThrow(/No chat/);
  });

  it('a reply whose process died is ended as interrupted by another, with the chunks it had; the next turn continues after it', async () => {
    const clock = { now: 1_000_000 };
    const [storeA, storeB] = open(clock);
    const dying = dyingStore(storeA);
    const [a, b] = [cycleOn(dying.store), cycleOn(storeB)];
    const chatId = newChatId('died');
    const turn = await startTurn(a, chatId, [ask('q1', 'Tell me')]);
    turn.hand.say('Half an ');
    const follower = sseReader(await b.resume(chatId, { userId: 'u' }));
    await follower.until((seen) => textIn(seen) === 'Half an ');
    dying.kill();
    turn.hand.say('answer never stored');
    clock.now += 10_001;
    // The next turn, on the other process: the dead reply is saved first, then the question.
    const next = await startTurn(b, chatId, [
      ask('q1', 'Tell me'),
      // The client's copy, as the resumed stream built it.
      {
        id: turn.turn.replyId,
        role: 'assistant',
        parts: [{ type: 'step-start' }, { type: 'text', text: 'Half an ', state: 'done' }],
      },
      ask('q2', 'Go on'),
    ]);
    next.hand.say('Going on.');
    next.hand.end();
    await next.finished;
    const resumedChunks = await follower.toEnd();
    expect(textIn(resumedChunks)).toBe('Half an ');
    expect(lastType(resumedChunks)).toBe('finish');
    const saved = await b.conversation(chatId, { userId: 'u' });
    expect(saved.messages.map((message) => message.id)).toEqual([
      'q1',
      turn.turn.replyId,
      'q2',
      next.turn.replyId,
    ]);
    expect(textOf(saved.messages[1])).toBe('Half an ');
    expect(saved.outcomes).toEqual({ [turn.turn.replyId]: 'interrupted' });
  });

  it('a question is never stored without its reply record; two live replies in one chat', async () => {
    const clock = { now: 1_000_000 };
    const [storeA, storeB] = open(clock);
    const counted = countingStore(storeA);
    const [a, b] = [cycleOn(counted.store), cycleOn(storeB)];
    const chatId = newChatId('two');
    const first = await startTurn(a, chatId, [ask('q1', 'One')]);
    // One commit wrote the question and the reply's record.
    expect(counted.calls.filter((name) => name === 'commit' || name === 'startReply')).toEqual([
      'commit',
    ]);
    const state = await storeB.getLiveState?.(chatId);
    expect(state?.replies.map((record) => record.replyId)).toEqual([first.turn.replyId]);
    const [question] = (await storeB.findMessageNodes?.({ chatId, messageId: 'q1' })) ?? [];
    expect(state?.replies[0]?.afterNodeId).toBe(question?.id);
    // A second tab asks another question at the same place while the first reply streams.
    clock.now += 1;
    const second = await startTurn(b, chatId, [ask('q2', 'Two')]);
    expect((await storeA.getLiveState?.(chatId))?.replies.map((record) => record.replyId)).toEqual([
      first.turn.replyId,
      second.turn.replyId,
    ]);
    const follower = sseReader(await a.resume(chatId, { userId: 'u' }));
    second.hand.say('Second.');
    first.hand.say('First.');
    await follower.until((seen) => textIn(seen) === 'Second.');
    second.hand.end();
    first.hand.end();
    expect(textIn(await follower.toEnd())).toBe('Second.');
    await Promise.all([first.finished, second.finished]);
    expect((await storeA.getLiveState?.(chatId))?.replies).toEqual([]);
    const one = await b.conversation(chatId, { userId: 'u', leaf: first.turn.replyId });
    const two = await b.conversation(chatId, { userId: 'u', leaf: second.turn.replyId });
    expect(textOf(one.messages.at(-1))).toBe('First.');
    expect(textOf(two.messages.at(-1))).toBe('Second.');
  });
});

/** A store handle whose process dies on `kill()`: from then on, no call it makes ever returns. */
function dyingStore(store: ContextStore): { store: ContextStore; kill(): void } {
  let dead = false;
  const wrapped = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || property === 'close') return value;
      return (...args: unknown[]) => {
        if (dead) return new Promise(() => undefined);
        return (value as (...parameters: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    store: wrapped,
    kill() {
      dead = true;
    },
  };
}

/**
 * A store handle that records the name of every call the cycle makes (a store round trip each)
 * and, given a count of the statements the store sent, how many each call sent (exact while no
 * other call runs at the same time).
 */
function countingStore(
  store: ContextStore,
  statements?: () => number,
): { store: ContextStore; calls: string[]; sent: Map<number, number> } {
  const calls: string[] = [];
  const sent = new Map<number, number>();
  const wrapped = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || property === 'watchChat' || property === 'close')
        return value;
      return (...args: unknown[]) => {
        const index = calls.push(String(property)) - 1;
        const before = statements?.() ?? 0;
        const result = (value as (...parameters: unknown[]) => unknown).apply(target, args);
        if (statements === undefined || !(result instanceof Promise)) return result;
        return result.finally(() => sent.set(index, statements() - before));
      };
    },
  });
  return { store: wrapped, calls, sent };
}

/** A store of each kind for the counting test, with a count of the SQL statements it sent. */
const countedStores: [
  string,
  (clock: Clock) => { store: ContextStore; statements: () => number },
][] = [
  [
    'SQLite file',
    (clock) => {
      const path = `/tmp/ctxgraph-ai-sdk-live-count-${Math.random().toString(36).slice(2)}.db`;
      sqliteFiles.push(path);
      const store = new SqliteContextStore({ path, clock: () => clock.now });
      opened.push(store);
      return { store, statements: () => Number.NaN };
    },
  ],
];
if (databaseUrl !== undefined) {
  countedStores.push([
    'PostgreSQL',
    (clock) => {
      let sent = 0;
      const store = new PostgresContextStore({
        connectionString: databaseUrl,
        // Every statement the pool sends passes here: one round trip each.
        connection: {
          debug: () => {
            sent += 1;
          },
        },
        schema: 'ctxgraph_ai_sdk_count',
        clock: () => clock.now,
      });
      opened.push(store);
      return { store, statements: () => sent };
    },
  ]);
}

describe.each(countedStores)('the store calls of a warm turn (%s)', (name, open) => {
  it('counts the round trips before the model call and for the reply save (live record included)', async () => {
    const clock = { now: 1_000_000 };
    const { store, statements } = open(clock);
    const counted = countingStore(store, statements);
    const cycle = cycleOn(counted.store);
    const chatId = newChatId('count');
    const first = await startTurn(cycle, chatId, [ask('q1', 'One')]);
    first.hand.say('First.');
    first.hand.end();
    await first.finished;
    const history = await cycle.messages(chatId, { userId: 'u' });
    counted.calls.length = 0;
    // Nothing watches the chat now (the first reply's batcher stopped): every statement from here
    // to the model call is the turn's own.
    const sentBefore = statements();
    const hand = handModel();
    const turn = await cycle.begin(
      { id: chatId, trigger: 'submit-message', messages: [...history, ask('q2', 'Two')] },
      { userId: 'u' },
    );
    const sentBeforeModel = statements() - sentBefore;
    const beforeModel = counted.calls.splice(0);
    const client = sseReader(
      turn.respond(
        streamText({ model: hand.model, messages: turn.messages, abortSignal: turn.abortSignal }),
      ),
    );
    const finished = client.toEnd();
    await hand.started;
    hand.say('Second.');
    hand.end();
    await finished;
    const saveIndex = counted.calls.lastIndexOf('commit');
    const reply = counted.calls.filter((call) => call !== 'appendReplyChunks');
    // The chat read once (its owner, and the snapshot the warm engine places the request on),
    // its live replies (any whose writer died is ended first), then the question written with
    // its reply's live record. The reply's save is one write with its live record's end.
    expect(beforeModel).toEqual(['getChat', 'getLiveState', 'commit']);
    expect(reply).toEqual(['commit']);
    if (name === 'PostgreSQL') {
      // One statement each: no transaction around them, no lookup before a write.
      expect(sentBeforeModel).toBe(3);
      expect(counted.sent.get(saveIndex)).toBe(1);
    }
    // The turn placed the question after the first reply, on the same branch, and saved the reply.
    const stored = await cycle.conversation(chatId, { userId: 'u' });
    expect(stored.messages.map((message) => [message.role, textOf(message)])).toEqual([
      ['user', 'One'],
      ['assistant', 'First.'],
      ['user', 'Two'],
      ['assistant', 'Second.'],
    ]);
    expect((await store.listBranches(chatId)).map((branch) => branch.name)).toEqual(['main']);
    await store.deleteChat(chatId);
  });
});
