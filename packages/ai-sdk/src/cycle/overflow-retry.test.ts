import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { usageOf } from '@ctxgraph/engine';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { APICallError, RetryError, streamText, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterAll, describe, expect, it } from 'vitest';
import { createChatHandler } from '../handler/chat-handler';
import { contextOverflowOf, retryBudget } from '../stream/context-overflow';
import type { CycleEngineOptions } from './attach';
import { type ChatCycle, createChatCycle } from './chat-cycle';

// A provider's context-length error makes the cycle retry the call once with less history, before
// anything reaches the client or the store; a second overflow, or any other error, is the usual
// failed reply. The errors are built as the AI SDK's providers build them (an `APICallError` with
// the provider's status, parsed body and raw body).

/** `streamText`'s `onError`: the tests read errors from the chunks, not the console. */
const quiet = (): void => undefined;

type Shape = 'openai' | 'anthropic' | 'google' | 'bedrock';

/** The context-length error a provider answers a call of `sent` input tokens with. */
function overflowError(shape: Shape, sent: number, limit: number): APICallError {
  const base = { url: 'https://provider.test/v1', requestBodyValues: {}, statusCode: 400 };
  switch (shape) {
    case 'openai': {
      const message = `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${sent} tokens. Please reduce the length of the messages.`;
      const data = {
        error: {
          message,
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        },
      };
      return new APICallError({ ...base, message, data, responseBody: JSON.stringify(data) });
    }
    case 'anthropic': {
      const message = `prompt is too long: ${sent} tokens > ${limit} maximum`;
      const data = { type: 'error', error: { type: 'invalid_request_error', message } };
      return new APICallError({ ...base, message, data, responseBody: JSON.stringify(data) });
    }
    case 'google': {
      const message = `The input token count (${sent}) exceeds the maximum number of tokens allowed (${limit}).`;
      const data = { error: { code: 400, message, status: 'INVALID_ARGUMENT' } };
      return new APICallError({ ...base, message, data, responseBody: JSON.stringify(data) });
    }
    case 'bedrock': {
      const message = 'Input is too long for requested model.';
      const data = { message };
      return new APICallError({
        ...base,
        message,
        data,
        responseBody: JSON.stringify(data),
        responseHeaders: {
          'x-amzn-errortype':
            'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/',
        },
      });
    }
  }
}

describe('contextOverflowOf', () => {
  it('recognises each provider shape, with the figures its message gives', () => {
    expect(contextOverflowOf(overflowError('openai', 130_000, 128_000))).toMatchObject({
      sent: 130_000,
      limit: 128_000,
    });
    expect(contextOverflowOf(overflowError('anthropic', 210_000, 200_000))).toMatchObject({
      sent: 210_000,
      limit: 200_000,
    });
    expect(contextOverflowOf(overflowError('google', 1_200_293, 1_048_576))).toMatchObject({
      sent: 1_200_293,
      limit: 1_048_576,
    });
    expect(contextOverflowOf(overflowError('bedrock', 1, 1))).toMatchObject({
      sent: undefined,
      limit: undefined,
    });
  });

  it('takes the completion off the window when the message splits the count', () => {
    const openai = new APICallError({
      message:
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (7000 in the messages, 2000 in the completion). Please reduce the length of the messages or completion.",
      url: 'u',
      requestBodyValues: {},
      statusCode: 400,
    });
    expect(contextOverflowOf(openai)).toMatchObject({ sent: 7000, limit: 6192 });
    const anthropic = new APICallError({
      message:
        'input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000, decrease input length or `max_tokens` and try again',
      url: 'u',
      requestBodyValues: {},
      statusCode: 400,
    });
    expect(contextOverflowOf(anthropic)).toMatchObject({ sent: 198_000, limit: 191_808 });
  });

  it('finds it in a stream error, a raw frame, by code alone, and wrapped in a RetryError', () => {
    // OpenAI Responses: an error frame before any output, code only.
    expect(
      contextOverflowOf({
        type: 'error',
        sequence_number: 1,
        error: {
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
          message: 'Your input exceeds the context window of this model.',
        },
      }),
    ).toBeDefined();
    // Bedrock's stream exception, a plain object with a message.
    expect(
      contextOverflowOf({ message: 'Too many input tokens. Max input tokens: 8192' }),
    ).toBeDefined();
    const wrapped = new RetryError({
      message: 'Failed after 3 attempts.',
      reason: 'maxRetriesExceeded',
      errors: [overflowError('anthropic', 3, 2)],
    });
    expect(contextOverflowOf(wrapped)).toMatchObject({ sent: 3, limit: 2 });
    expect(
      contextOverflowOf(new Error('outer', { cause: overflowError('google', 5, 4) })),
    ).toMatchObject({ sent: 5 });
  });

  it('leaves every other error alone', () => {
    const other = (message: string, statusCode = 400, data?: unknown) =>
      new APICallError({ message, url: 'u', requestBodyValues: {}, statusCode, data });
    for (const error of [
      other(
        'max_tokens: 300000 > 64000, which is the maximum allowed number of output tokens for claude',
      ),
      other("Invalid 'messages[1].content': string too long.", 400, {
        error: { message: 'x', type: 'invalid_request_error', code: 'string_above_max_length' },
      }),
      other('The maximum tokens you requested exceeds the model limit of 32768'),
      other('Request exceeds the maximum allowed number of bytes.', 413),
      // An overflow's words with a status no overflow comes with.
      other('prompt is too long: 3 tokens > 2 maximum', 500),
      other('Rate limit reached', 429),
      new Error('network down'),
      'prompt is too long',
      null,
      undefined,
      42,
    ]) {
      expect(contextOverflowOf(error)).toBeUndefined();
    }
  });

  it('follows a cycle of causes without looping', () => {
    const first: { message: string; cause?: unknown } = { message: 'a' };
    first.cause = { message: 'b', cause: first };
    expect(contextOverflowOf(first)).toBeUndefined();
  });
});

describe('retryBudget', () => {
  it("turns the provider's limit into the engine's count, a tenth off, below what was sent", () => {
    // The engine counted 1000 for a call the provider counted 1300 against a limit of 1200.
    expect(retryBudget(1000, { sent: 1300, limit: 1200 }, undefined)).toBe(830);
    // A limit alone; never above what was sent or the turn's budget.
    expect(retryBudget(1000, { sent: undefined, limit: 800 }, undefined)).toBe(720);
    expect(retryBudget(1000, { sent: undefined, limit: 5000 }, undefined)).toBe(900);
    expect(retryBudget(1000, { sent: undefined, limit: 800 }, 600)).toBe(540);
    // No figures: three quarters of what was sent.
    expect(retryBudget(1000, { sent: undefined, limit: undefined }, undefined)).toBe(675);
    expect(retryBudget(0, { sent: undefined, limit: undefined }, undefined)).toBe(1);
  });
});

// The cycle, on every store: a model with a window of WINDOW tokens (a token: 4 characters of the
// prompt's text), which refuses a longer prompt with the provider's error.

const WINDOW = 700;

type Prompt = Parameters<MockLanguageModelV3['doStream']>[0]['prompt'];

function promptTokens(prompt: Prompt): number {
  let characters = 0;
  for (const message of prompt) {
    if (typeof message.content === 'string') characters += message.content.length;
    else
      for (const part of message.content) if (part.type === 'text') characters += part.text.length;
  }
  return Math.ceil(characters / 4);
}

/**
 * A model that answers "Short answer." when the prompt fits its window and fails with `refuse`'s
 * error when it does not (or always, with `always`). Each call's prompt size is kept.
 */
function windowModel(refuse: (sent: number) => unknown, always = false) {
  const calls: number[] = [];
  const model = new MockLanguageModelV3({
    doStream: async ({ prompt }) => {
      const sent = promptTokens(prompt);
      calls.push(sent);
      if (always || sent > WINDOW) throw refuse(sent);
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of [
              { type: 'text-start', id: 't' },
              { type: 'text-delta', id: 't', delta: 'Short answer.' },
              { type: 'text-end', id: 't' },
              {
                type: 'finish',
                finishReason: { unified: 'stop', raw: undefined },
                usage: {
                  inputTokens: {
                    total: sent,
                    noCache: sent,
                    cacheRead: undefined,
                    cacheWrite: undefined,
                  },
                  outputTokens: { total: 3, text: 3, reasoning: undefined },
                },
              },
            ] as const)
              controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  });
  return { model, calls };
}

const text = (index: number, role: string): string =>
  `${role} turn ${index}: ${'a long message about quokkas and their island '.repeat(3)}`;

/** A body with `turns` earlier turns (about 1300 tokens for 16) and a new question. */
function longChat(chatId: string, turns: number, question = 'And now?') {
  const messages: UIMessage[] = [];
  for (let index = 0; index < turns; index++) {
    messages.push({
      id: `q${index}`,
      role: 'user',
      parts: [{ type: 'text', text: text(index, 'user') }],
    });
    messages.push({
      id: `a${index}`,
      role: 'assistant',
      parts: [{ type: 'text', text: text(index, 'assistant') }],
    });
  }
  messages.push({ id: 'last', role: 'user', parts: [{ type: 'text', text: question }] });
  return { id: chatId, trigger: 'submit-message', messages };
}

/** The UI message chunks of a turn's response. */
async function chunksOf(response: Response): Promise<{ type: string; [key: string]: unknown }[]> {
  const body = await response.text();
  return body
    .split('\n\n')
    .map((event) => event.replace(/^data: /, ''))
    .filter((data) => data !== '' && data !== '[DONE]')
    .map((data) => JSON.parse(data) as { type: string });
}

const environment = (globalThis as { process?: { env: Record<string, string | undefined> } })
  .process?.env;
const databaseUrl = environment?.DATABASE_URL;
const cleanup: (() => void | Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanup) await step();
});

const stores: [string, () => ContextStore][] = [
  ['memory', () => new InMemoryContextStore()],
  [
    'SQLite',
    () => {
      const path = join(tmpdir(), `ctxgraph-overflow-${Math.random().toString(36).slice(2)}.db`);
      const store = new SqliteContextStore({ path });
      cleanup.push(async () => {
        await store.close();
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
      });
      return store;
    },
  ],
];
if (databaseUrl !== undefined) {
  stores.push([
    'PostgreSQL',
    () => {
      const store = new PostgresContextStore({
        connectionString: databaseUrl,
        schema: `ctxgraph_overflow_${Math.random().toString(36).slice(2, 10)}`,
      });
      cleanup.push(async () => {
        await store.close();
      });
      return store;
    },
  ]);
}

/** The stored path's ids and the reply's usage record. */
async function stored(cycle: ChatCycle, store: ContextStore, chatId: string, replyId: string) {
  const messages = await cycle.messages(chatId, { userId: 'u' });
  const node = (await store.findMessageNodes({ chatId, messageId: replyId, limit: 10 }))[0];
  return {
    ids: messages.map((message) => message.id),
    usage: node === undefined ? null : usageOf(node),
    replyNodes: (await store.findMessageNodes({ chatId, messageId: replyId, limit: 10 })).length,
    questionNodes: (await store.findMessageNodes({ chatId, messageId: 'last', limit: 10 })).length,
  };
}

const renderer = new XmlRenderer();

describe.each(stores)('overflow retry on %s', (_name, makeStore) => {
  it.each(['openai', 'anthropic', 'google', 'bedrock'] as const)(
    '%s: cut and retried once, saved once, nothing of the first call shown or stored',
    async (shape) => {
      const store = makeStore();
      const cycle = createChatCycle({
        store,
        engine: { renderer },
        generateId: (() => {
          let n = 0;
          return () => `id-${++n}`;
        })(),
      });
      const { model, calls } = windowModel((sent) => overflowError(shape, sent, WINDOW));
      const chatId = `chat-${shape}`;
      const turn = await cycle.begin(longChat(chatId, 16), { userId: 'u' });
      const sentFirst = turn.messages.length;
      const chunks = await chunksOf(
        turn.respond((input) => streamText({ model, ...input, onError: quiet })),
      );
      // Two calls: the refused one, and the retry within the window with less history.
      expect(calls).toHaveLength(2);
      expect(calls[0]).toBeGreaterThan(WINDOW);
      expect(calls[1]).toBeLessThanOrEqual(WINDOW);
      expect(turn.messages.length).toBeLessThan(sentFirst);
      expect(turn.messages.at(-1)).toMatchObject({ role: 'user' });
      // The client saw one reply, no error.
      expect(chunks.filter((chunk) => chunk.type === 'start')).toHaveLength(1);
      expect(chunks.find((chunk) => chunk.type === 'error')).toBeUndefined();
      expect(chunks.find((chunk) => chunk.type === 'start')).toMatchObject({
        messageId: turn.replyId,
      });
      const after = await stored(cycle, store, chatId, turn.replyId);
      expect(after.ids.at(-2)).toBe('last');
      expect(after.ids.at(-1)).toBe(turn.replyId);
      expect(after.ids).toHaveLength(34);
      expect(after.questionNodes).toBe(1);
      expect(after.replyNodes).toBe(1);
      expect(after.usage).toMatchObject({ outcome: 'complete', inputTokens: calls[1] });
      const retry = after.usage?.overflowRetry;
      expect(retry).toMatchObject({ strategy: 'cut' });
      if (shape === 'bedrock') expect(retry).toMatchObject({ limit: null, sent: null });
      else expect(retry).toMatchObject({ limit: WINDOW, sent: calls[0] });
      // The store's live copy of the reply (what a resume reads) holds the retry's chunks alone.
      const live = await store.readReply?.({ chatId, replyId: turn.replyId });
      const liveTypes = (live?.chunks ?? []).map((chunk) => (chunk as { type: string }).type);
      expect(liveTypes.filter((type) => type === 'start')).toHaveLength(1);
      expect(liveTypes).not.toContain('error');
      expect(live?.record.endedAt).not.toBeNull();
      // The HTTP read shows it by message id.
      const conversation = await cycle.conversation(chatId, { userId: 'u' });
      expect(conversation.retries).toEqual({ [turn.replyId]: retry });
      expect(conversation.outcomes).toEqual({});
    },
  );

  it('a second overflow is the error it was: one error chunk, saved as a failed reply is', async () => {
    const store = makeStore();
    const cycle = createChatCycle({ store, engine: { renderer } });
    const { model, calls } = windowModel((sent) => overflowError('anthropic', sent, 10), true);
    const turn = await cycle.begin(longChat('twice', 4), { userId: 'u' });
    const chunks = await chunksOf(
      turn.respond((input) => streamText({ model, ...input, onError: quiet }), {
        onError: (error) => (error as Error).message,
      }),
    );
    expect(calls).toHaveLength(2);
    expect(chunks.map((chunk) => chunk.type)).toEqual(['start', 'error']);
    expect(chunks[1]?.errorText).toMatch(/^prompt is too long: \d+ tokens > 10 maximum$/);
    // As a failed call that was never retried leaves it (the non-overflow test below).
    const failed = await stored(cycle, store, 'twice', turn.replyId);
    expect(failed.questionNodes).toBe(1);
    expect(failed.ids.filter((id) => id === turn.replyId).length).toBeLessThanOrEqual(1);
    const plain = createChatCycle({ store, engine: { renderer } });
    const other = windowModel(() => overflowError('anthropic', 1, 1), true);
    const plainTurn = await plain.begin(longChat('plain', 4), { userId: 'u' });
    await chunksOf(
      plainTurn.respond(
        streamText({
          model: other.model,
          system: plainTurn.system,
          messages: plainTurn.messages,
          onError: quiet,
        }),
      ),
    );
    expect(other.calls).toHaveLength(1);
    const plainStored = await stored(plain, store, 'plain', plainTurn.replyId);
    expect(failed.ids.length).toBe(plainStored.ids.length);
    expect(failed.usage?.outcome ?? null).toBe(plainStored.usage?.outcome ?? null);
  });

  it('an error that is not an overflow passes unchanged, with one call', async () => {
    const store = makeStore();
    const cycle = createChatCycle({ store, engine: { renderer } });
    const invalid = new APICallError({
      message: "messages: roles must alternate between 'user' and 'assistant'",
      url: 'u',
      requestBodyValues: {},
      statusCode: 400,
      data: { type: 'error', error: { type: 'invalid_request_error', message: 'roles' } },
    });
    const { model, calls } = windowModel(() => invalid, true);
    const turn = await cycle.begin(longChat('other', 1), { userId: 'u' });
    const chunks = await chunksOf(
      turn.respond((input) => streamText({ model, ...input, onError: quiet })),
    );
    expect(calls).toHaveLength(1);
    expect(chunks).toEqual([
      { type: 'start', messageId: turn.replyId },
      { type: 'error', errorText: 'An error occurred.' },
    ]);
    const after = await stored(cycle, store, 'other', turn.replyId);
    expect(after.usage?.overflowRetry).toBeUndefined();
    expect(after.questionNodes).toBe(1);
  });

  it('with autoCompact, the retry compacts: older turns summarized, recorded as compacted', async () => {
    const store = makeStore();
    const summaries: number[] = [];
    const engine: CycleEngineOptions = {
      renderer,
      autoCompact: {
        summarize: (messages) => {
          summaries.push(messages.length);
          return 'They talked about quokkas.';
        },
      },
    };
    const cycle = createChatCycle({ store, engine });
    const { model, calls } = windowModel((sent) => overflowError('openai', sent, WINDOW));
    const turn = await cycle.begin(longChat('compacting', 16), { userId: 'u' });
    await chunksOf(turn.respond((input) => streamText({ model, ...input, onError: quiet })));
    expect(calls).toHaveLength(2);
    expect(summaries).toHaveLength(1);
    const after = await stored(cycle, store, 'compacting', turn.replyId);
    expect(after.usage?.overflowRetry).toMatchObject({ strategy: 'compacted', limit: WINDOW });
    expect(after.questionNodes).toBe(1);
    expect(after.replyNodes).toBe(1);
    // The path now starts with the summary; the reply follows the question.
    expect(after.ids.at(-1)).toBe(turn.replyId);
    expect(after.ids.at(-2)).toBe('last');
  });

  it('a result (not a function) cannot be called again: the overflow passes as it came', async () => {
    const store = makeStore();
    const cycle = createChatCycle({ store, engine: { renderer } });
    const { model, calls } = windowModel((sent) => overflowError('google', sent, WINDOW));
    const turn = await cycle.begin(longChat('result', 16), { userId: 'u' });
    const chunks = await chunksOf(
      turn.respond(
        streamText({ model, system: turn.system, messages: turn.messages, onError: quiet }),
      ),
    );
    expect(calls).toHaveLength(1);
    expect(chunks.map((chunk) => chunk.type)).toEqual(['start', 'error']);
  });
});

describe('overflow retry under a turn budget', () => {
  it('tightens the budget the estimate got wrong, keeps its options, and records its cache prediction', async () => {
    const store = new InMemoryContextStore();
    // The engine thinks the chat fits in 5000 tokens; the provider counts more than its window.
    const cycle = createChatCycle({
      store,
      engine: { renderer },
      budget: { maxInputTokens: 5000 },
    });
    const { model, calls } = windowModel((sent) => overflowError('google', sent, WINDOW));
    const turn = await cycle.begin(longChat('budget', 16), { userId: 'u' });
    await chunksOf(turn.respond((input) => streamText({ model, ...input, onError: quiet })));
    expect(calls).toHaveLength(2);
    expect(calls[1]).toBeLessThanOrEqual(WINDOW);
    const after = await stored(cycle, store, 'budget', turn.replyId);
    const retry = after.usage?.overflowRetry;
    expect(retry?.maxInputTokens).toBeLessThan(5000);
    expect(retry).toMatchObject({ strategy: 'cut', limit: WINDOW, sent: calls[0] });
    // The retried call's prediction is the one confirmed by its usage.
    expect(after.usage?.cache).toBeDefined();
    expect(after.usage?.inputTokens).toBe(calls[1]);
  });
});

describe('a call given as a function', () => {
  it('that rejects ends the reply with an error chunk; the question stays, no reply is saved', async () => {
    const store = new InMemoryContextStore();
    const cycle = createChatCycle({ store, engine: { renderer } });
    const turn = await cycle.begin(longChat('rejects', 1), { userId: 'u' });
    const chunks = await chunksOf(
      turn.respond(async () => {
        throw new Error('no model configured');
      }),
    );
    expect(chunks).toEqual([{ type: 'error', errorText: 'An error occurred.' }]);
    const after = await stored(cycle, store, 'rejects', turn.replyId);
    expect(after.questionNodes).toBe(1);
    expect(after.replyNodes).toBe(0);
    // The chat takes its next turn as usual.
    const { model } = windowModel(() => new Error('unused'));
    const next = await cycle.begin(
      {
        id: 'rejects',
        trigger: 'submit-message',
        message: { id: 'again', role: 'user', parts: [{ type: 'text', text: 'Again?' }] },
      },
      { userId: 'u' },
    );
    const answer = await chunksOf(
      next.respond((input) => streamText({ model, ...input, onError: quiet })),
    );
    expect(answer.find((chunk) => chunk.type === 'text-delta')).toMatchObject({
      delta: 'Short answer.',
    });
  });

  it('that throws at once throws from respond(), as streamText would before it', async () => {
    const cycle = createChatCycle({ store: new InMemoryContextStore(), engine: { renderer } });
    const turn = await cycle.begin(longChat('throws', 1), { userId: 'u' });
    expect(() =>
      turn.respond(() => {
        throw new Error('bad options');
      }),
    ).toThrow('bad options');
  });
});

describe('overflow retry through the handler', () => {
  it('answers 200 with the retried reply; a second overflow answers as a failed call does', async () => {
    const store = new InMemoryContextStore();
    const cycle = createChatCycle({ store, engine: { renderer } });
    let always = false;
    const { model, calls } = windowModel((sent) => overflowError('anthropic', sent, WINDOW));
    const stubborn = windowModel((sent) => overflowError('anthropic', sent, WINDOW), true);
    const replies: number[] = [];
    const handler = createChatHandler({
      cycle,
      userId: () => 'u',
      reply: (turn) => {
        replies.push(turn.messages.length);
        return streamText({
          model: always ? stubborn.model : model,
          system: turn.system,
          messages: turn.messages,
          abortSignal: turn.abortSignal,
          onError: quiet,
        });
      },
    });
    const post = (body: unknown) =>
      handler(
        new Request('http://localhost/api/chat', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
    const response = await post(longChat('http', 16));
    expect(response.status).toBe(200);
    const chunks = await chunksOf(response);
    expect(chunks.find((chunk) => chunk.type === 'text-delta')).toMatchObject({
      delta: 'Short answer.',
    });
    expect(chunks.find((chunk) => chunk.type === 'error')).toBeUndefined();
    expect(calls).toHaveLength(2);
    // `reply` was called again with the same turn, its messages the retry's.
    expect(replies).toHaveLength(2);
    expect(replies[1]).toBeLessThan(replies[0] as number);
    const read = await handler(new Request('http://localhost/api/chat/http/messages'));
    const { retries, messages } = (await read.json()) as {
      retries: Record<string, { strategy: string }>;
      messages: UIMessage[];
    };
    expect(retries[messages.at(-1)?.id as string]).toMatchObject({
      strategy: 'cut',
      limit: WINDOW,
    });

    always = true;
    const failed = await post(longChat('http-twice', 16));
    expect(failed.status).toBe(200);
    expect((await chunksOf(failed)).map((chunk) => chunk.type)).toEqual(['start', 'error']);
    expect(stubborn.calls).toHaveLength(2);
  });
});
