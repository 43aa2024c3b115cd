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
import { startPostgresServer } from '../../../../tooling/postgres-server.ts';
import { createMockModel } from '../server/mock-model';
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

export async function startTestServer(
  chunkDelayMs = 0,
  model: LanguageModel = createMockModel({ chunkDelayMs }),
  storeKind: TestStoreKind = 'sqlite',
): Promise<TestServer> {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-chat-app-'));
  const postgresStore = storeKind === 'postgres' ? await openPostgresStore() : undefined;
  const running = await startChatServer({
    ...(postgresStore
      ? { store: postgresStore.store }
      : { sqlitePath: join(directory, 'chat.db') }),
    model,
    port: 0,
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
 * A PostgreSQL store in a schema of its own (DATABASE_URL, or a throwaway embedded server), and
 * how to drop it all.
 */
async function openPostgresStore(): Promise<{
  store: PostgresContextStore;
  drop(): Promise<void>;
}> {
  const server = await startPostgresServer();
  const schema = `chat_app_${randomBytes(6).toString('hex')}`;
  const store = new PostgresContextStore({ connectionString: server.url, schema });
  return {
    store,
    async drop() {
      await store.close();
      const admin = postgres(server.url, { max: 1, onnotice: () => {} });
      await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
      await server.stop();
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
