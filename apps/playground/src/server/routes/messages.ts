import { assistantText, user } from '@ctxgraph/codecs';
import { withUsage } from '@ctxgraph/engine';
import { type LanguageModel, streamText } from 'ai';
import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { z } from 'zod';
import { buildChatView, buildMessageAdded, type ChatView, type MessageAdded } from '../chat-view';
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
  | { type: 'done'; view: ChatView }
  | { type: 'error'; message: string };

/** The id the usage of a reply is recorded under: the configured model's. */
function modelIdOf(model: LanguageModel): string {
  return typeof model === 'string' ? model : model.modelId;
}

const schemas = {
  message: z
    .object({ role: z.enum(['user', 'assistant']), text: z.string().min(1, 'must not be empty') })
    .strict(),
  reply: z
    .object({ text: z.string().min(1, 'must not be empty'), renderer: rendererSchema.optional() })
    .strict(),
};

/**
 * `POST /chats/:chatId/messages`: save a message written on the page, answering what changed
 * ({@link MessageAdded}); `POST
 * /chats/:chatId/reply`: save the user's message and stream the model's reply (NDJSON of
 * {@link ReplyEvent}).
 */
export function messageRoutes(dependencies: RouteDependencies) {
  const { store, engines, defaultUserId, languageModel, logError } = dependencies;
  return new Hono()
    .post('/chats/:chatId/messages', jsonBody(schemas.message), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      // Answers what changed (the message, its node, the moved head), not the whole chat.
      const change = await engines.use(context.req.param('chatId'), userId, async (engine) => {
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
          'No model is configured: start the playground with OPENAI_API_KEY, or OPENAI_BASE_URL and OPENAI_MODEL, or write the reply by hand.',
        );
      }
      const chatId = context.req.param('chatId');
      const renderer = rendererFor(body.renderer ?? 'xml');
      // The user's message is saved before the model is asked, so a failing model loses nothing.
      // The chat's lock is held only for that and the resolve: other requests on the chat go on
      // while the model streams.
      const { systemPrompt, messages } = await engines.use(chatId, userId, async (engine) => {
        engine.set(user(body.text));
        await engine.save();
        return engine.resolve({ renderer, format: 'model' });
      });
      context.header('Content-Type', 'application/x-ndjson; charset=utf-8');
      return stream(context, async (output) => {
        const send = (event: ReplyEvent) => output.write(`${JSON.stringify(event)}\n`);
        let reply = '';
        try {
          const result = streamText({
            model: languageModel,
            system: systemPrompt,
            messages,
            // One retry keeps a person waiting seconds, not the SDK's default minute of back-off.
            maxRetries: 1,
            // Errors arrive as stream parts and are reported below; this only stops the SDK's own console print.
            onError: () => {},
          });
          for await (const part of result.fullStream) {
            if (part.type === 'text-delta') {
              reply += part.text;
              await send({ type: 'delta', text: part.text });
            } else if (part.type === 'error') {
              throw part.error;
            }
          }
          if (reply === '') throw new Error('the model returned no text');
          // The call's usage is saved with the reply (the engine's record, beside the message),
          // so inspect(), usage() and the comparison count its tokens and cost.
          const usage = await result.totalUsage;
          // Locked again to save the reply. It joins the chat's active branch as it is now (the
          // page cannot switch branches while it waits for a reply).
          const view = await engines.use(chatId, userId, async (engine) => {
            engine.set(
              withUsage(assistantText(reply), { usage, modelId: modelIdOf(languageModel) }),
            );
            await engine.save();
            return buildChatView(engine, store);
          });
          await send({ type: 'done', view });
        } catch (error) {
          const response = toErrorResponse(error);
          logError('The model reply failed:', error);
          await send({
            type: 'error',
            message: `The model reply failed: ${response.body.error.message}`,
          });
        }
      });
    });
}
