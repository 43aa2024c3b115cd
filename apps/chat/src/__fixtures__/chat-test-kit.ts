// Test helpers: the AI SDK's own chat client (AbstractChat with DefaultChatTransport) in Node,
// and the app started in this process on a real port with a real SQLite file (or a PostgreSQL
// schema of its own).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresContextStore } from '@ctxgraph/store-postgres';
import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  type LanguageModel,
} from 'ai';
import postgres from 'postgres';
import { type PostgresServer, startPostgresServer } from '../../../../tooling/postgres-server.ts';
import { createMockModel, type MockLanguageModel } from '../server/mock-model';
import { type RunningChatServer, startChatServer } from '../server/start-server';
import type { ChatUIMessage } from '../server/tools';

class ArrayChatState implements ChatState<ChatUIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: ChatUIMessage[];
  constructor(messages: ChatUIMessage[]) {
    this.messages = messages;
  }
  pushMessage = (message: ChatUIMessage): void => {
    this.messages = [...this.messages, message];
  };
  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: ChatUIMessage): void => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** The AI SDK's AbstractChat with a plain array state: what `useChat` runs, without React. */
export class NodeChat extends AbstractChat<ChatUIMessage> {
  constructor(
    url: string,
    id: string,
    messages: ChatUIMessage[] = [],
    init: Pick<ChatInit<ChatUIMessage>, 'onToolCall' | 'sendAutomaticallyWhen'> = {},
  ) {
    super({
      ...init,
      id,
      transport: new DefaultChatTransport<ChatUIMessage>({ api: `${url}/api/chat` }),
      state: new ArrayChatState(messages),
    });
  }
  get currentError(): Error | undefined {
    return this.state.error;
  }
}

/** The app on a real port with a fresh SQLite file, and a way to read what it stored. */
export interface TestServer extends RunningChatServer {
  readonly directory: string;
  messages(chatId: string, query?: string): Promise<{ status: number; body: unknown }>;
  stop(): Promise<void>;
}

/** The stores the app is tested on: its own (SQLite), and PostgreSQL. */
export type TestStoreKind = 'sqlite' | 'postgres';

/** Options of {@link startTestServer}. */
export interface TestServerOptions {
  /** The mock's milliseconds between words (when no `model` is given). @default 0 */
  chunkDelayMs?: number;
  /** The model. @default the app's mock */
  model?: LanguageModel;
  /** @default 'sqlite' */
  store?: TestStoreKind;
  /** Serve the built client from this folder. */
  clientDirectory?: string;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-chat-app-'));
  const postgresStore = options.store === 'postgres' ? await openPostgresStore() : undefined;
  const running = await startChatServer({
    ...(postgresStore
      ? { store: postgresStore.store }
      : { sqlitePath: join(directory, 'chat.db') }),
    model: options.model ?? createMockModel({ chunkDelayMs: options.chunkDelayMs ?? 0 }),
    port: 0,
    ...(options.clientDirectory ? { clientDirectory: options.clientDirectory } : {}),
  });
  return {
    ...running,
    directory,
    async messages(chatId, query = '') {
      const response = await fetch(
        `${running.url}/api/chat/${encodeURIComponent(chatId)}/messages${query}`,
      );
      return { status: response.status, body: await response.json() };
    },
    async stop() {
      await running.close();
      await postgresStore?.drop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * The PostgreSQL server of this test file (DATABASE_URL, or one throwaway embedded server),
 * shared by the stores it opens and stopped when the last of them is dropped.
 */
let postgresServer: { server: Promise<PostgresServer>; users: number } | undefined;

async function acquirePostgresServer(): Promise<PostgresServer> {
  postgresServer ??= { server: startPostgresServer(), users: 0 };
  postgresServer.users += 1;
  return postgresServer.server;
}

async function releasePostgresServer(): Promise<void> {
  if (postgresServer === undefined) return;
  postgresServer.users -= 1;
  if (postgresServer.users > 0) return;
  const { server } = postgresServer;
  postgresServer = undefined;
  await (await server).stop();
}

/**
 * A PostgreSQL store in a schema of its own (DATABASE_URL, or a throwaway embedded server), and
 * how to drop it all.
 */
async function openPostgresStore(): Promise<{
  store: PostgresContextStore;
  drop(): Promise<void>;
}> {
  const server = await acquirePostgresServer();
  const schema = `chat_app_${randomBytes(6).toString('hex')}`;
  const store = new PostgresContextStore({ connectionString: server.url, schema });
  return {
    store,
    async drop() {
      try {
        await store.close();
        const admin = postgres(server.url, { max: 1, onnotice: () => {} });
        await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await admin.end();
      } finally {
        await releasePostgresServer();
      }
    },
  };
}

/** A message as JSON (what a reload compares: ids, roles, parts, metadata). */
export function plain(messages: readonly ChatUIMessage[]): unknown {
  return JSON.parse(JSON.stringify(messages));
}

/** The text of a message's text parts. */
export function textOf(message: ChatUIMessage | undefined): string {
  return (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** A model held mid-reply (see {@link holdAfterWords}), and how to let its replies go on. */
export interface HeldModel {
  readonly model: MockLanguageModel;
  /** Lets every reply held now go on to its end; later replies are held again. */
  release(): void;
}

/**
 * `model`, whose streamed replies stop before their word `words + 1` until {@link
 * HeldModel.release} is called or the call is stopped (a shorter reply is not held): a test acts
 * while a reply is under way, however fast or busy the machine, instead of racing a timed stream.
 */
export function holdAfterWords(model: MockLanguageModel, words: number): HeldModel {
  const newGate = () => {
    let open = (): void => {};
    const promise = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { promise, open };
  };
  let gate = newGate();
  return {
    release() {
      gate.open();
      gate = newGate();
    },
    model: {
      ...model,
      async doStream(options) {
        const { stream } = await model.doStream(options);
        const signal = options.abortSignal;
        let seen = 0;
        const held = (): Promise<void> => {
          const released = gate.promise;
          return new Promise<void>((resolve) => {
            if (signal?.aborted) return resolve();
            const done = (): void => {
              signal?.removeEventListener('abort', done);
              resolve();
            };
            signal?.addEventListener('abort', done, { once: true });
            void released.then(done);
          });
        };
        return {
          stream: stream.pipeThrough(
            new TransformStream({
              async transform(part, controller) {
                if (part.type === 'text-delta') {
                  seen += 1;
                  // Held once: released, the reply goes on to its end.
                  if (seen === words + 1) await held();
                }
                if (signal?.aborted) return;
                controller.enqueue(part);
              },
            }),
          ),
        };
      },
    },
  };
}
