import { type ChatCycle, createChatCycle } from '@ctxgraph/ai-sdk';
import { assistantText, user } from '@ctxgraph/codecs';
import { openAICacheProfile } from '@ctxgraph/engine';
import { o200kTokenizer } from '@ctxgraph/tokenizer-o200k';
import { generateId, type LanguageModel, streamText } from 'ai';
import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { z } from 'zod';
import type { RendererName } from '../../shared/wire';
import {
  buildExchangeAdded,
  buildMessageAdded,
  type ExchangeAdded,
  type MessageAdded,
} from '../chat-view';
import { PlaygroundRequestError, toErrorResponse } from '../http-errors';
import { jsonBody, rendererSchema, userOf } from '../read-request';
import { rendererFor } from '../renderers';
import type { RouteDependencies } from './route-dependencies';

/**
 * One line of the NDJSON stream `POST /chats/:chatId/reply` answers: pieces of the reply, then
 * either the chat with both messages saved, or why the reply failed. (A stream has no JSON type
 * for the typed client to infer, so the page imports this type from here.)
 */
export type ReplyEvent =
  | { type: 'delta'; text: string }
  | { type: 'done'; change: ExchangeAdded }
  | { type: 'error'; message: string };

/** The id the usage of a reply is recorded under: the configured model's. */
function modelIdOf(model: LanguageModel): string {
  return typeof model === 'string' ? model : model.modelId;
}

const stopIdSchema = z.string().min(1, 'must not be empty').max(100, 'at most 100 characters');

const schemas = {
  message: z
    .object({ role: z.enum(['user', 'assistant']), text: z.string().min(1, 'must not be empty') })
    .strict(),
  reply: z
    .object({
      text: z.string().min(1, 'must not be empty'),
      renderer: rendererSchema.optional(),
      /** The page's token budget: the model gets what `resolve({ budget })` keeps. */
      maxInputTokens: z
        .number()
        .int('a whole number of tokens')
        .min(1, 'at least 1 token')
        .max(10_000_000, 'at most 10,000,000 tokens')
        .optional(),
      /** Chosen by the page to stop this reply later (`POST …/reply/stop`). */
      stopId: stopIdSchema.optional(),
    })
    .strict(),
  stop: z.object({ stopId: stopIdSchema }).strict(),
};

/**
 * `POST /chats/:chatId/messages`: save a message written on the page, answering what changed
 * ({@link MessageAdded}); `POST
 * /chats/:chatId/reply`: the model's reply through `@ctxgraph/ai-sdk`'s chat cycle (the same as
 * apps/chat): the user's message is saved at the active branch's head, the reply streams (NDJSON
 * of {@link ReplyEvent}) and is saved with its usage, outcome and cache prediction; the last
 * event says what changed ({@link ExchangeAdded}).
 */
export function messageRoutes(dependencies: RouteDependencies) {
  const { store, chats, defaultUserId, languageModel, logError } = dependencies;
  // One chat cycle per renderer (the renderer is an engine setting) for the model replies, apart
  // from the cycle the chat routes read through (`chats`): a reply's engine is left positioned
  // at its reply, while the reads' engines stay on the active branch. The same tokenizer as
  // theirs, so the figures agree.
  const cycles = new Map<RendererName, ChatCycle>();
  const cycleFor = (name: RendererName): ChatCycle => {
    let cycle = cycles.get(name);
    if (cycle === undefined) {
      cycle = createChatCycle({
        store,
        engine: { renderer: rendererFor(name), tokenizer: o200kTokenizer },
      });
      cycles.set(name, cycle);
    }
    return cycle;
  };
  // The replies streaming now that the page may stop, by user, chat and the page's stop id.
  const stoppers = new Map<string, AbortController>();
  const stopKey = (userId: string, chatId: string, stopId: string) =>
    JSON.stringify([userId, chatId, stopId]);
  return new Hono()
    .post('/chats/:chatId/messages', jsonBody(schemas.message), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      // Answers what changed (the message, its node, the moved head), not the whole chat.
      const change = await chats.use(context.req.param('chatId'), userId, async (engine) => {
        engine.set(body.role === 'user' ? user(body.text) : assistantText(body.text));
        await engine.save();
        return buildMessageAdded(engine, store);
      });
      return context.json(change, 200);
    })
    .post('/chats/:chatId/reply', jsonBody(schemas.reply), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      if (languageModel === null) {
        throw new PlaygroundRequestError(
          'No model is configured: start the playground with PLAYGROUND_MODEL=echo (offline), OPENAI_API_KEY, or OPENAI_BASE_URL and OPENAI_MODEL, or write the reply by hand.',
        );
      }
      const chatId = context.req.param('chatId');
      // The page shows the active branch: the question continues from its head. Read through the
      // warm engine, which also checks that the chat exists and is this user's.
      const after = await chats.use(chatId, userId, async (engine) => {
        await engine.resolve({ renderer: rendererFor('xml') });
        return engine.headMessageId ?? null;
      });
      // The AI SDK request cycle does the rest, as in apps/chat: the question is saved where the
      // page's conversation ends before the model is asked (a failing model loses nothing), the
      // model gets the resolved context (budgeted, with its cache plan, when the page sets a
      // budget), and the reply is saved when it ends with the whole call's usage, how it ended
      // and the budget's cache prediction.
      const turn = await cycleFor(body.renderer ?? 'xml').begin(
        {
          id: chatId,
          message: { id: generateId(), role: 'user', parts: [{ type: 'text', text: body.text }] },
          trigger: 'submit-message',
        },
        {
          userId,
          after,
          context: (engine) => engine.loadContext(),
          ...(body.maxInputTokens === undefined
            ? {}
            : {
                budget: { maxInputTokens: body.maxInputTokens, ...cacheProfileFor(languageModel) },
              }),
        },
      );
      // The page's Stop: the model call ends as when the client goes away, but the stream to the
      // page goes on, so its last event is the reply as saved (marked aborted, parts settled).
      const stopper = new AbortController();
      const stopping = body.stopId === undefined ? undefined : stopKey(userId, chatId, body.stopId);
      if (stopping !== undefined) stoppers.set(stopping, stopper);
      const result = streamText({
        model: languageModel,
        system: turn.system,
        messages: turn.messages,
        abortSignal: AbortSignal.any([turn.abortSignal, stopper.signal]),
        // One retry keeps a person waiting seconds, not the SDK's default minute of back-off.
        maxRetries: 1,
        // Errors arrive as stream parts and are reported below; this only stops the SDK's own console print.
        onError: () => {},
      });
      let failure: unknown;
      const chunks = turn.stream(result, {
        modelId: modelIdOf(languageModel),
        onError: (error) => {
          failure = error;
          return toErrorResponse(error).body.error.message;
        },
      });
      context.header('Content-Type', 'application/x-ndjson; charset=utf-8');
      return stream(context, async (output) => {
        const send = (event: ReplyEvent) => output.write(`${JSON.stringify(event)}\n`);
        const reader = chunks.getReader();
        // The page went away (stopped, closed): the cycle stops the model and saves the reply so
        // far, marked aborted, with its parts settled.
        output.onAbort(() => {
          void reader.cancel().catch(() => undefined);
        });
        let saved = false;
        let stopped = false;
        let errorText: string | undefined;
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            if (value.type === 'text-delta') await send({ type: 'delta', text: value.delta });
            else if (value.type === 'error') errorText ??= value.errorText;
            // The cycle sends `finish` only once the reply is saved.
            else if (value.type === 'finish') saved = true;
            // Stopped: the cycle saves the reply so far and then ends the stream (an error
            // chunk if that save failed).
            else if (value.type === 'abort') stopped = true;
          }
          if (errorText !== undefined || !(saved || stopped)) {
            if (failure !== undefined) logError('The model reply failed:', failure);
            await send({
              type: 'error',
              message: `The model reply failed: ${errorText ?? 'the stream ended before the reply was saved'}`,
            });
            return;
          }
          // What changed, read through the warm engine (which sees the cycle's write as a moved
          // head): the question and the reply, not the whole chat.
          const change = await chats.use(chatId, userId, async (engine) => {
            await engine.resolve({ renderer: rendererFor('xml') });
            const nodes = await engine.findMessage(turn.replyId);
            const replyNode = nodes[0];
            if (replyNode === undefined) {
              throw new Error(
                stopped
                  ? 'stopped before the model wrote anything; the question is saved'
                  : 'the saved reply is not in the chat',
              );
            }
            return buildExchangeAdded(engine, store, replyNode);
          });
          await send({ type: 'done', change });
        } catch (error) {
          logError('The model reply failed:', error);
          await send({
            type: 'error',
            message: `The model reply failed: ${toErrorResponse(error).body.error.message}`,
          });
        } finally {
          if (stopping !== undefined) stoppers.delete(stopping);
        }
      });
    })
    .post('/chats/:chatId/reply/stop', jsonBody(schemas.stop), (context) => {
      const userId = userOf(context, defaultUserId);
      const key = stopKey(userId, context.req.param('chatId'), context.req.valid('json').stopId);
      const stopper = stoppers.get(key);
      stopper?.abort();
      // False when that reply already ended (or was never this user's): nothing to stop.
      return context.json({ stopped: stopper !== undefined }, 200);
    });
}

/**
 * The cache profile a reply is planned with: the model's own (an OpenAI model gets the OpenAI
 * profile, an Anthropic one Anthropic's marks); the offline echo model caches the way OpenAI
 * does (an automatic prefix), so it is planned as OpenAI.
 */
function cacheProfileFor(model: LanguageModel) {
  if (typeof model === 'object' && model.provider === 'ctxgraph-playground')
    return { cacheProfile: openAICacheProfile() };
  return { model };
}
