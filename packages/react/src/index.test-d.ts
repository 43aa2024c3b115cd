import type { SavedChat } from '@ctxgraph/client';
import type { UIMessage } from 'ai';
import { describe, expectTypeOf, it } from 'vitest';
import {
  type MessageVersions,
  type UseCtxgraphChatHelpers,
  type UseCtxgraphChatOptions,
  useCtxgraphChat,
} from './index';

// The app's own message type: metadata, a data part, a tool.
type AppMessage = UIMessage<
  { sentAt: number },
  { weather: { city: string; degrees: number } },
  { getWeather: { input: { city: string }; output: { degrees: number } } }
>;

describe('useCtxgraphChat types', () => {
  it('carries the app’s UIMessage through messages, sendMessage and the callbacks', () => {
    const page = () => {
      const chat = useCtxgraphChat<AppMessage>({
        id: 'chat-1',
        onFinish: ({ message }) => {
          expectTypeOf(message).toEqualTypeOf<AppMessage>();
        },
      });
      expectTypeOf(chat).toEqualTypeOf<UseCtxgraphChatHelpers<AppMessage>>();
      expectTypeOf(chat.messages).toEqualTypeOf<AppMessage[]>();
      const part = chat.messages[0]?.parts[0];
      if (part?.type === 'data-weather') expectTypeOf(part.data.degrees).toEqualTypeOf<number>();
      if (part?.type === 'tool-getWeather' && part.state === 'output-available') {
        expectTypeOf(part.output).toEqualTypeOf<{ degrees: number }>();
      }
      void chat.sendMessage({ text: 'Hi', metadata: { sentAt: 1 } });
      // @ts-expect-error: the metadata is the app's shape
      void chat.sendMessage({ text: 'Hi', metadata: { sentAt: 'now' } });
      void chat.sendMessage({ text: 'Hi again', messageId: 'm1' });
      expectTypeOf(chat.stop).toEqualTypeOf<() => Promise<void>>();
      expectTypeOf(chat.versionsOf('m1')).toEqualTypeOf<MessageVersions | undefined>();
      expectTypeOf(chat.node).toEqualTypeOf<string | null>();
      return chat;
    };
    expectTypeOf(page).returns.toEqualTypeOf<UseCtxgraphChatHelpers<AppMessage>>();
  });

  it('needs an id, and takes no transport or messages of its own', () => {
    expectTypeOf<UseCtxgraphChatOptions<AppMessage>>().toHaveProperty('id');
    // @ts-expect-error: the hook builds the transport
    const withTransport: UseCtxgraphChatOptions = { id: 'c', transport: undefined };
    void withTransport;
    // @ts-expect-error: an id is needed
    const withoutId: UseCtxgraphChatOptions = {};
    void withoutId;
  });

  it('types the saved chat with the app’s message', () => {
    expectTypeOf<SavedChat<AppMessage>['messages']>().toEqualTypeOf<AppMessage[]>();
  });
});
