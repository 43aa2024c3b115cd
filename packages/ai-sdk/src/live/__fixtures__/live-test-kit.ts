// Test helpers for live replies across processes: two cycles on two handles of one store hold no
// state in common but the store, as two server processes would. Nothing here waits for an amount
// of time: each helper waits for what it needs to see (a chunk, an event, a notice of the feed).
import type { ContextStore } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { streamText, type UIMessage } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { type ChatCycle, createChatCycle } from '../../cycle/chat-cycle';
import type { ChatCycleOptions } from '../../cycle/cycle-options';

const environment = (globalThis as { process?: { env: Record<string, string | undefined> } })
  .process?.env;
const databaseUrl = environment?.DATABASE_URL;

/** A store clock the test moves by hand (leases run out when the test says so). */
export interface Clock {
  now: number;
}

/** Opens two handles on one database with one clock: two server processes. */
export type StorePair = (clock: Clock) => [ContextStore, ContextStore];

/**
 * The stores the live tests run on, each as two handles over the same data: memory (one object:
 * its data is the object's), a SQLite file, and PostgreSQL when `DATABASE_URL` is set (in the
 * schema `schema`: each test file its own, so the files' clocks never meet in one table).
 */
export function liveStorePairs(schema: string): {
  readonly pairs: [string, StorePair][];
  /** Closes every store opened and deletes the SQLite files (call it in `afterAll`). */
  readonly closeAll: () => Promise<void>;
} {
  const opened: ContextStore[] = [];
  const sqliteFiles: string[] = [];
  const pairs: [string, StorePair][] = [
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
        const path = `/tmp/ctxgraph-${schema}-${Math.random().toString(36).slice(2)}.db`;
        sqliteFiles.push(path);
        const first = new SqliteContextStore({ path, clock: () => clock.now });
        const second = new SqliteContextStore({ path, clock: () => clock.now });
        opened.push(first, second);
        return [first, second];
      },
    ],
  ];
  if (databaseUrl !== undefined) {
    pairs.push([
      'PostgreSQL, two handles',
      (clock) => {
        const make = () =>
          new PostgresContextStore({
            connectionString: databaseUrl,
            schema,
            clock: () => clock.now,
          });
        const first = make();
        const second = make();
        opened.push(first, second);
        return [first, second];
      },
    ]);
  }
  return {
    pairs,
    async closeAll() {
      for (const store of opened) await store.close();
      const fs = (await import('node:fs' as string)) as {
        rmSync(path: string, options: { force: boolean }): void;
      };
      for (const path of sqliteFiles)
        for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${path}${suffix}`, { force: true });
    },
  };
}

let counter = 0;

/** A chat id no other test uses. */
export const newChatId = (name: string): string => {
  counter += 1;
  return `${name}-${counter}-${Math.random().toString(36).slice(2, 8)}`;
};

/** A user message. */
export const ask = (id: string, text: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});

/** A cycle on `store` with live replies flushed every 5 ms (and `options` on top). */
export const cycleOn = (store: ContextStore, options: Partial<ChatCycleOptions> = {}): ChatCycle =>
  createChatCycle({
    store,
    engine: { renderer: new XmlRenderer() },
    live: { flushMs: 5 },
    ...options,
  });

type ModelPart =
  Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer Part>
    ? Part
    : never;

/** A model the test writes, one call at a time: see {@link handModel}. */
export interface HandModel {
  readonly model: MockLanguageModelV3;
  /** Resolves once the model was called (its text part is open). */
  readonly started: Promise<void>;
  /** Streams a text delta (nothing once the call ended or was aborted). */
  say(delta: string): void;
  /** Ends the call: the text part and a `finish` with usage. */
  end(): void;
  /** How many times the call was aborted (its `abortSignal`). */
  readonly aborted: number;
}

/**
 * A model the test writes: each call opens a text part, then streams what `say` gives it, until
 * `end` (or the call's abort).
 */
export function handModel(): HandModel {
  let current: ReadableStreamDefaultController<ModelPart> | undefined;
  let open = false;
  let aborted = 0;
  let called!: () => void;
  const started = new Promise<void>((resolve) => {
    called = resolve;
  });
  const model = new MockLanguageModelV3({
    doStream: async ({ abortSignal }) => {
      const stream = new ReadableStream<ModelPart>({
        start(controller) {
          current = controller;
          open = true;
          controller.enqueue({ type: 'text-start', id: 't' });
          called();
          abortSignal?.addEventListener(
            'abort',
            () => {
              aborted += 1;
              if (!open) return;
              open = false;
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
    say(delta) {
      if (open) current?.enqueue({ type: 'text-delta', id: 't', delta });
    },
    end() {
      if (!open) return;
      open = false;
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

/** What {@link sseReader} gives: the JSON events read so far, and ways to read on. */
export interface SseReader {
  readonly seen: unknown[];
  /** Reads until `predicate` holds for what was seen (or the stream ended). */
  until(predicate: (seen: unknown[]) => boolean): Promise<unknown[]>;
  /** Reads to the end of the stream. */
  toEnd(): Promise<unknown[]>;
  /** Cancels the stream (a client that goes away). */
  cancel(): Promise<void>;
}

/** Reads the server-sent events of a response as they come: JSON data, comments skipped. */
export function sseReader(response: Response): SseReader {
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
    async until(predicate) {
      while (!predicate(seen) && !done) await next();
      return seen;
    },
    async toEnd() {
      while (await next());
      return seen;
    },
    cancel: () => reader.cancel(),
  };
}

/** The text of the `text-delta` chunks of a UI message stream. */
export const textIn = (chunks: unknown[]): string =>
  chunks
    .map((chunk) => {
      const { type, delta } = chunk as { type: string; delta?: string };
      return type === 'text-delta' ? (delta ?? '') : '';
    })
    .join('');

/** The type of the last chunk. */
export const lastType = (chunks: unknown[]): string | undefined =>
  (chunks.at(-1) as { type?: string } | undefined)?.type;

/** A turn begun with the hand model streaming its reply. */
export interface StartedTurn {
  readonly hand: HandModel;
  readonly turn: Awaited<ReturnType<ChatCycle['begin']>>;
  /** The writer's own response (the POST's answer), read as it comes. */
  readonly client: SseReader;
  /** The writer's response read to its end. */
  readonly finished: Promise<unknown[]>;
}

/** Begins a turn on `cycle` and streams the hand model's reply; the client's stream is read to its end. */
export async function startTurn(
  cycle: ChatCycle,
  chatId: string,
  messages: UIMessage[],
  signal?: AbortSignal,
): Promise<StartedTurn> {
  const hand = handModel();
  const turn = await cycle.begin(
    { id: chatId, trigger: 'submit-message', messages },
    { userId: 'u', ...(signal === undefined ? {} : { signal }) },
  );
  const response = turn.respond(
    streamText({ model: hand.model, messages: turn.messages, abortSignal: turn.abortSignal }),
  );
  const client = sseReader(response);
  const finished = client.toEnd();
  await hand.started;
  return { hand, turn, client, finished };
}

/** A store handle whose process dies on `kill()`: from then on, no call it makes ever returns. */
export function dyingStore(store: ContextStore): { store: ContextStore; kill(): void } {
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
export function countingStore(
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

/**
 * A store handle whose `readReply` calls wait at a gate while it is shut (a reader that falls
 * behind: a slow connection, a busy process); every other call goes through.
 */
export function gatedReads(store: ContextStore): {
  store: ContextStore;
  /** Holds the next `readReply` calls until `open()`. */
  shut(): void;
  open(): void;
} {
  let gate: Promise<void> | undefined;
  let release = (): void => {};
  const wrapped = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property !== 'readReply') return value.bind(target);
      return async (...args: unknown[]) => {
        if (gate !== undefined) await gate;
        return (value as (...parameters: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    store: wrapped,
    shut() {
      gate = new Promise((resolve) => {
        release = resolve;
      });
    },
    open() {
      gate = undefined;
      release();
    },
  };
}

/**
 * Resolves once `condition` holds: checked now, and again after each notice of the chat's change
 * feed on `store` (a condition on the store's state, never a wait for an amount of time).
 */
export async function untilChanged(
  store: ContextStore,
  chatId: string,
  condition: () => Promise<boolean>,
): Promise<void> {
  let wake: (() => void) | undefined;
  let pending = false;
  const unwatch = store.watchChat?.(chatId, () => {
    if (wake === undefined) pending = true;
    else {
      const resolve = wake;
      wake = undefined;
      resolve();
    }
  });
  try {
    for (;;) {
      if (await condition()) return;
      if (pending) {
        pending = false;
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    unwatch?.();
  }
}
