import type { ContextStore } from '@ctxgraph/fragments-core';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { streamText } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { textOf } from '../cycle/__fixtures__/cycle-test-kit';
import {
  ask,
  type Clock,
  countingStore,
  cycleOn,
  dyingStore,
  handModel,
  lastType,
  liveStorePairs,
  newChatId,
  sseReader,
  startTurn,
  textIn,
} from './__fixtures__/live-test-kit';

// Live replies across processes: two cycles on two handles of one store hold no state in common
// but the store, as two server processes would. Nothing here waits for an amount of time: each
// step waits for what it needs to see (a chunk, an event, a save).

const { pairs: storePairs, closeAll } = liveStorePairs('ctxgraph_ai_sdk_live');
afterAll(closeAll);
const databaseUrl = (globalThis as { process?: { env: Record<string, string | undefined> } })
  .process?.env.DATABASE_URL;
const sqliteFiles: string[] = [];
const opened: ContextStore[] = [];
afterAll(async () => {
  for (const store of opened) await store.close();
  const fs = (await import('node:fs' as string)) as {
    rmSync(path: string, options: { force: boolean }): void;
  };
  for (const path of sqliteFiles)
    for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${path}${suffix}`, { force: true });
});

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
    // `live: null` comes once the reply is saved; revisions only grow.
    const after = (await events.until(
      (seen) => (seen.at(-1) as { live: unknown }).live === null,
    )) as {
      version: number;
    }[];
    const revisions = after.map((event) => event.version);
    expect(revisions).toEqual([...revisions].sort((x, y) => x - y));
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
        // Every statement the store sends passes here: one round trip each. The change feed's
        // own (its LISTEN, on a connection of its own, and its poll of the watched chats: the
        // batcher watches the chat while its reply streams) are not the turn's: they run when
        // the feed gets to them and may land inside any call, so they are left out.
        connection: {
          debug: (_connection: number, query: string) => {
            const feeds =
              /^\s*(un)?listen\b/i.test(query) ||
              query.includes('json_build_array(r.reply_id, r.chunk_count)');
            if (!feeds) sent += 1;
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
