import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import {
  type InferToolOutput,
  type InferUIMessageChunk,
  type InferUITools,
  streamText,
  tool,
  type UIDataTypes,
  type UIMessage,
} from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import {
  type ChatTurn,
  type ContextGauge,
  type ConversationVersions,
  createChatCycle,
  type HistoryRefusal,
  type HistoryTools,
  historyTools,
  type OverflowRetry,
  type ReadBranchResult,
  type StoredConversation,
} from './index';

const tools = {
  getWeather: tool({
    inputSchema: z.object({ city: z.string() }),
    execute: async () => ({ sky: 'clear' }),
  }),
};
const metadataSchema = z.object({ sentAt: z.number() }).optional();
type MyUIMessage = UIMessage<
  z.infer<typeof metadataSchema>,
  UIDataTypes,
  InferUITools<typeof tools>
>;

describe('the app message type carries through', () => {
  it('takes the tools streamText takes, and types the turn with the app message', async () => {
    const cycle = createChatCycle<MyUIMessage>({
      store: new InMemoryContextStore(),
      engine: { renderer: new XmlRenderer() },
      schemas: { metadataSchema, tools },
    });
    const turn = await cycle.begin({}, { userId: 'u' });
    expectTypeOf(turn).toEqualTypeOf<ChatTurn<MyUIMessage>>();
    expectTypeOf(turn.originalMessages).toEqualTypeOf<MyUIMessage[]>();
    const result = streamText({
      model: new MockLanguageModelV3(),
      system: turn.system,
      messages: turn.messages,
      tools,
      abortSignal: turn.abortSignal,
    });
    expectTypeOf(turn.respond(result)).toEqualTypeOf<Response>();
    // A function of the input, with the app's tools: retried once on a context overflow.
    expectTypeOf(
      turn.respond((input) => streamText({ model: new MockLanguageModelV3(), ...input, tools })),
    ).toEqualTypeOf<Response>();
    expectTypeOf(
      turn.stream(async (input) => streamText({ model: new MockLanguageModelV3(), ...input })),
    ).toEqualTypeOf<ReadableStream<InferUIMessageChunk<MyUIMessage>>>();
    expectTypeOf(await cycle.messages('c', { userId: 'u' })).toEqualTypeOf<MyUIMessage[]>();
    const read = await cycle.conversation('c', { userId: 'u' });
    expectTypeOf(read).toEqualTypeOf<StoredConversation<MyUIMessage>>();
    expectTypeOf(read.messages).toEqualTypeOf<MyUIMessage[]>();
    expectTypeOf(read.nodeIds).toEqualTypeOf<Record<string, string>>();
    expectTypeOf(read.retries).toEqualTypeOf<Record<string, OverflowRetry>>();
    expectTypeOf(read.retries.any?.strategy).toEqualTypeOf<'cut' | 'compacted' | undefined>();
    expectTypeOf(read.versions).toEqualTypeOf<Record<string, ConversationVersions>>();
    expectTypeOf(read.versions.any?.nodes[0]?.leafNodeId).toEqualTypeOf<string | undefined>();
    expectTypeOf(await cycle.contextGauge('c', { userId: 'u' })).toEqualTypeOf<ContextGauge>();
    const versions = await cycle.versions('c', 'm', { userId: 'u' });
    expectTypeOf(versions[0]?.message).toEqualTypeOf<MyUIMessage | undefined>();
    // The general read returns what its task returns, awaited.
    expectTypeOf(
      await cycle.read('c', { userId: 'u' }, (engine) => engine.chatId),
    ).toEqualTypeOf<string>();
    const usage = await cycle.read('c', { userId: 'u' }, (engine) => engine.usage());
    expectTypeOf(usage.calls).toEqualTypeOf<number>();
  });
});

describe('the history tools', () => {
  it('go where streamText takes tools, with the app tools and from a turn', async () => {
    const store = new InMemoryContextStore();
    const recall = historyTools({ store, userId: 'u', chatId: 'c' });
    expectTypeOf(recall).toEqualTypeOf<HistoryTools>();
    streamText({ model: new MockLanguageModelV3(), prompt: 'p', tools: recall });
    const cycle = createChatCycle({ store, engine: { renderer: new XmlRenderer() } });
    const turn = await cycle.begin({}, { userId: 'u' });
    streamText({
      model: new MockLanguageModelV3(),
      messages: turn.messages,
      tools: { ...tools, ...turn.historyTools({ maxResultTokens: 1000 }) },
    });
    expectTypeOf<InferToolOutput<typeof recall.readBranch>>().toEqualTypeOf<
      ReadBranchResult | HistoryRefusal
    >();
    if ('searchHistory' in recall) expectTypeOf(recall.searchHistory).not.toBeUndefined();
  });
});
