import { type Summarizer, summarizer } from '@ctxgraph/engine';
import { Hono } from 'hono';
import { z } from 'zod';
import { buildChatView } from '../chat-view';
import { PlaygroundRequestError } from '../http-errors';
import { jsonBody, userOf } from '../read-request';
import type { RouteDependencies } from './route-dependencies';

const compactSchema = z
  .object({
    /** The last turns kept after the summary. */
    keepTurns: z.number().int().min(0).max(1000).optional(),
    /** A summary written by hand; without it the configured model writes one. */
    summary: z.string().trim().min(1, 'the summary must not be empty').max(20_000).optional(),
  })
  .strict();

/**
 * `POST /chats/:chatId/compact`: the engine's `compact()` on the active branch, with the built-in
 * summarizer on the configured model, or a summary written by hand (the only way without a model).
 * Answers what was written (null when there was nothing to compact) and the chat after.
 */
export function compactionRoutes(dependencies: RouteDependencies) {
  const { store, chats, defaultUserId, languageModel } = dependencies;
  return new Hono().post('/chats/:chatId/compact', jsonBody(compactSchema), async (context) => {
    const userId = userOf(context, defaultUserId);
    const body = context.req.valid('json');
    let summarize: Summarizer;
    if (body.summary !== undefined) {
      const written = body.summary;
      summarize = () => written;
    } else if (languageModel !== null) {
      summarize = summarizer({ model: languageModel });
    } else {
      throw new PlaygroundRequestError(
        'No model is configured to write the summary: write it yourself (summary), or start the server with OPENAI_API_KEY.',
        { issues: [{ path: 'summary', message: 'required without a model' }] },
      );
    }
    const answer = await chats.use(context.req.param('chatId'), userId, async (engine) => {
      const result = await engine.compact({ summarize, keep: { turns: body.keepTurns ?? 2 } });
      return { result, view: await buildChatView(engine, store) };
    });
    return context.json(answer, 200);
  });
}
