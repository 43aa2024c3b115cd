// Test helpers: the AI SDK's own chat client (AbstractChat with DefaultChatTransport) in Node,
// and the app started in this process on a real port with a real SQLite file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
} from 'ai';
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

export async function startTestServer(
  chunkDelayMs = 0,
  model = createMockModel({ chunkDelayMs }),
): Promise<TestServer> {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-chat-app-'));
  const running = await startChatServer({ sqlitePath: join(directory, 'chat.db'), model, port: 0 });
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
      rmSync(directory, { recursive: true, force: true });
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
