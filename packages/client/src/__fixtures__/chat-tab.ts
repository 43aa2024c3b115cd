// A browser tab of the tests without a framework: the AI SDK's own chat (`AbstractChat`, what
// `useChat` runs) with the session driving it, as a binding would wire them.
import {
  AbstractChat,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  type UIMessage,
} from 'ai';
import { createChatClient } from '../chat-client';
import { type ChatSession, createChatSession } from '../chat-session';
import type { RetryOptions } from '../follow-chat-events';
import type { TestChatServer } from './chat-server';

class WatchedState implements ChatState<UIMessage> {
  #status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  readonly #onChange: () => void;
  constructor(onChange: () => void) {
    this.#onChange = onChange;
  }
  get status(): ChatStatus {
    return this.#status;
  }
  set status(status: ChatStatus) {
    this.#status = status;
    this.#onChange();
  }
  pushMessage = (message: UIMessage): void => {
    this.messages = [...this.messages, message];
    this.#onChange();
  };
  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1);
    this.#onChange();
  };
  replaceMessage = (index: number, message: UIMessage): void => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
    this.#onChange();
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

class TabChat extends AbstractChat<UIMessage> {
  setMessages(messages: UIMessage[]): void {
    this.state.messages = messages;
  }
}

/** The AI SDK's chat on `transport` with no session (a tab that follows nothing). */
export function plainChat(chatId: string, transport: DefaultChatTransport<UIMessage>): TabChat {
  return new TabChat({ id: chatId, transport, state: new WatchedState(() => {}) });
}

/** The text of a message's text parts. */
export function textOf(message: UIMessage | undefined): string {
  return (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** One tab on a chat of the test server. */
export class TestTab {
  readonly chat: TabChat;
  readonly session: ChatSession<UIMessage>;
  /** Every node the session asked the URL to show, in order. */
  readonly nodes: (string | null)[] = [];
  readonly #watchers = new Set<() => void>();
  #end: (() => void) | undefined;

  constructor(
    server: TestChatServer,
    chatId: string,
    options: { node?: string; retry?: RetryOptions } = {},
  ) {
    const client = createChatClient({ fetch: server.fetch });
    this.session = createChatSession<UIMessage>({
      client,
      chatId,
      ...(options.node === undefined ? {} : { node: options.node }),
      ...(options.retry === undefined ? {} : { retry: options.retry }),
      onNodeChange: (node) => this.nodes.push(node),
    });
    const state = new WatchedState(() => this.#changed());
    this.chat = new TabChat({
      id: chatId,
      transport: new DefaultChatTransport<UIMessage>(this.session.transportOptions()),
      state,
    });
    this.session.subscribe(() => this.#changed());
  }

  #changed(): void {
    this.session.driverChanged();
    for (const watcher of [...this.#watchers]) watcher();
  }

  /** Loads the chat and follows it; resolves once the first read ended. */
  async open(): Promise<void> {
    const chat = this.chat;
    this.#end = this.session.start({
      status: () => chat.status,
      messages: () => chat.messages,
      setMessages: (messages) => chat.setMessages(messages),
      resumeStream: () => chat.resumeStream(),
      stop: () => chat.stop(),
    });
    await this.until(() => this.session.getSnapshot().loaded);
  }

  close(): void {
    this.#end?.();
  }

  /** The texts of the messages shown. */
  texts(): string[] {
    return this.chat.messages.map(textOf);
  }

  /** Resolves once `condition` holds (checked on every change of the chat or the session). */
  until(condition: () => boolean): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve) => {
      const watcher = (): void => {
        if (!condition()) return;
        this.#watchers.delete(watcher);
        resolve();
      };
      this.#watchers.add(watcher);
    });
  }

  /** Resolves once the tab is idle: ready, not stopping, and its turn's path read back. */
  idle(): Promise<void> {
    return this.until(() => {
      const last = this.chat.messages.at(-1);
      const snapshot = this.session.getSnapshot();
      return (
        this.chat.status === 'ready' &&
        !snapshot.stopping &&
        (last === undefined || snapshot.saved.messages.at(-1)?.id === last.id)
      );
    });
  }
}
