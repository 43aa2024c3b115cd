import type { BranchRecord, ChatRecord, JsonValue } from '@ctxgraph/fragments-core';
import { hc, type InferRequestType } from 'hono/client';
import { describe, expectTypeOf, it } from 'vitest';
import type { GraphNodeView as ServerGraphNodeView } from '../server/chat-view';
import type { PlaygroundRoutes } from '../server/playground-app';
import type { PromptPreview } from '../server/renderers';
import type { RendererName } from '../shared/wire';
import type { BudgetedCall, ChatView, PlaygroundInfo, SearchResults } from './api';

// The page's types are read from the server's routes: these fail to compile when a route's answer
// or body changes and the page has not followed.
const chat = hc<PlaygroundRoutes>('/').api.chats[':chatId'];

describe("the page's API types come from the server's routes", () => {
  it('reads a chat as buildChatView answers it', () => {
    expectTypeOf<ChatView['branch']>().toEqualTypeOf<string>();
    expectTypeOf<ChatView['headMessageId']>().toEqualTypeOf<string | null>();
    expectTypeOf<ChatView['graph']['nodes'][number]>().toEqualTypeOf<ServerGraphNodeView>();
    expectTypeOf<ChatView['context']>().toEqualTypeOf<JsonValue[]>();
    expectTypeOf<ChatView['prompts'][number]>().toEqualTypeOf<PromptPreview>();
    expectTypeOf<ChatView['chat']>().toEqualTypeOf<ChatRecord>();
    expectTypeOf<ChatView['graph']['branches'][number]>().toEqualTypeOf<BranchRecord>();
    // Nothing the server does not send.
    expectTypeOf<ChatView>().not.toHaveProperty('title');
  });

  it('reads the other answers from their routes', () => {
    expectTypeOf<PlaygroundInfo['renderers']>().toEqualTypeOf<RendererName[]>();
    expectTypeOf<PlaygroundInfo['model']>().toEqualTypeOf<{
      modelId: string;
      baseURL: string | null;
    } | null>();
    expectTypeOf<BudgetedCall['headMessageId']>().toEqualTypeOf<string | null>();
    expectTypeOf<SearchResults['nextCursor']>().toEqualTypeOf<string | null>();
  });

  it("sends the bodies and queries the routes' schemas accept", () => {
    expectTypeOf<InferRequestType<typeof chat.messages.$post>['json']>().toEqualTypeOf<{
      role: 'user' | 'assistant';
      text: string;
    }>();
    expectTypeOf<InferRequestType<typeof chat.compare.$get>['query']>().toEqualTypeOf<{
      left: string;
      right: string;
    }>();
    expectTypeOf<InferRequestType<typeof chat.$get>['param']>().toEqualTypeOf<{
      chatId: string;
    }>();
  });
});
