import { Hono } from 'hono';
import { z } from 'zod';
import { DEFAULT_MODEL_ID } from '../playground-config';
import { jsonBody, queryOf, rendererSchema, userOf } from '../read-request';
import { rendererFor } from '../renderers';
import type { RouteDependencies } from './route-dependencies';

/** A token budget as the page sends it (a query string or a body field). */
const budgetSchema = z.coerce
  .number()
  .int('a whole number of tokens')
  .min(1, 'at least 1 token')
  .max(10_000_000, 'at most 10,000,000 tokens');

const querySchema = z.object({
  renderer: rendererSchema.optional(),
  modelId: z.string().min(1).max(200).optional(),
  maxInputTokens: budgetSchema.optional(),
});

const budgetedCallSchema = z
  .object({ maxInputTokens: budgetSchema, renderer: rendererSchema.optional() })
  .strict();

/**
 * `GET /chats/:chatId/inspect?renderer=&modelId=&maxInputTokens=`: the engine's inspect snapshot;
 * with `maxInputTokens`, its budget plan (what `resolve({ budget })` would keep and leave out, and
 * the prefix it would share with the last budgeted call), remembering nothing.
 * `POST /chats/:chatId/budgeted-call`: `resolve({ budget })` as an app does before calling the
 * model: the engine remembers the plan, so the next call's prefix report compares with it.
 */
export function inspectRoutes(dependencies: RouteDependencies) {
  const { engines, defaultUserId, model } = dependencies;
  return new Hono()
    .get('/chats/:chatId/inspect', queryOf(querySchema), async (context) => {
      const userId = userOf(context, defaultUserId);
      const query = context.req.valid('query');
      const snapshot = await engines.use(context.req.param('chatId'), userId, (engine) =>
        engine.inspect({
          modelId: query.modelId ?? model?.modelId ?? DEFAULT_MODEL_ID,
          renderer: rendererFor(query.renderer ?? 'xml'),
          ...(query.maxInputTokens === undefined
            ? {}
            : { budget: { maxInputTokens: query.maxInputTokens } }),
        }),
      );
      return context.json(snapshot, 200);
    })
    .post('/chats/:chatId/budgeted-call', jsonBody(budgetedCallSchema), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      const call = await engines.use(context.req.param('chatId'), userId, async (engine) => {
        const resolved = await engine.resolve({
          renderer: rendererFor(body.renderer ?? 'xml'),
          budget: { maxInputTokens: body.maxInputTokens },
        });
        if (resolved.budget === undefined) throw new Error('resolve({ budget }) gave no report');
        return { headMessageId: engine.headMessageId ?? null, budget: resolved.budget };
      });
      return context.json(call, 200);
    });
}
