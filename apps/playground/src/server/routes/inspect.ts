import { usageOf } from '@ctxgraph/engine';
import type { MessageNodeRecord } from '@ctxgraph/fragments-core';
import { Hono } from 'hono';
import { z } from 'zod';
import { DEFAULT_MODEL_ID } from '../playground-config';
import { jsonBody, queryOf, rendererSchema, userOf } from '../read-request';
import { rendererFor } from '../renderers';
import type { RouteDependencies } from './route-dependencies';

/** The largest budget the page may ask for. */
const MAX_BUDGET = 10_000_000;

/** A token budget as the page sends it (a query string or a body field). */
const budgetSchema = z.coerce
  .number()
  .int('a whole number of tokens')
  .min(1, 'at least 1 token')
  .max(MAX_BUDGET, 'at most 10,000,000 tokens');

const querySchema = z.object({
  renderer: rendererSchema.optional(),
  modelId: z.string().min(1).max(200).optional(),
  maxInputTokens: budgetSchema.optional(),
});

const budgetedCallSchema = z
  .object({ maxInputTokens: budgetSchema, renderer: rendererSchema.optional() })
  .strict();

/**
 * `GET /chats/:chatId/inspect?renderer=&modelId=&maxInputTokens=`: the engine's inspect snapshot
 * with its budget plan (what `resolve({ budget })` would keep and leave out, and the prefix it
 * would share with the last budgeted call), remembering nothing. Without `maxInputTokens` the plan
 * is for the largest budget (10,000,000 tokens), so it keeps the whole branch: the Inspect and
 * Budget windows read their token figures from this one plan (the engine's `estimate` counts
 * message text only, the plan also each message's framing), and so agree.
 * `GET /chats/:chatId/cache-calls`: the model calls recorded on the active branch with a cache
 * prediction (replies through the chat cycle with a budget), each predicted and confirmed, and
 * their totals as `usage({ scope: 'branch' }).cache` reports them.
 * `POST /chats/:chatId/budgeted-call`: `resolve({ budget })` as an app does before calling the
 * model: the engine remembers the plan, so the next call's prefix report compares with it.
 */
export function inspectRoutes(dependencies: RouteDependencies) {
  const { store, chats, defaultUserId, model } = dependencies;
  return new Hono()
    .get('/chats/:chatId/inspect', queryOf(querySchema), async (context) => {
      const userId = userOf(context, defaultUserId);
      const query = context.req.valid('query');
      const snapshot = await chats.use(context.req.param('chatId'), userId, (engine) =>
        engine.inspect({
          modelId: query.modelId ?? model?.modelId ?? DEFAULT_MODEL_ID,
          renderer: rendererFor(query.renderer ?? 'xml'),
          budget: { maxInputTokens: query.maxInputTokens ?? MAX_BUDGET },
        }),
      );
      return context.json(snapshot, 200);
    })
    .get('/chats/:chatId/cache-calls', async (context) => {
      const userId = userOf(context, defaultUserId);
      const chatId = context.req.param('chatId');
      const answer = await chats.use(chatId, userId, async (engine) => {
        // The totals are the engine's own (usage() over the active branch); the calls are the
        // records they add up, read from the branch's replies, oldest first.
        const totals = await engine.usage({ scope: 'branch' });
        const head = engine.headMessageId;
        const graph = await store.getGraph(chatId);
        const byId = new Map<string, MessageNodeRecord>(graph.nodes.map((node) => [node.id, node]));
        const calls = [];
        for (let id = head ?? null; id !== null; ) {
          const node = byId.get(id);
          if (node === undefined) break;
          const usage = usageOf(node);
          if (usage?.cache !== undefined) {
            calls.push({
              nodeId: node.id,
              messageId: node.message.id,
              modelId: usage.modelId,
              outcome: usage.outcome,
              ...usage.cache,
            });
          }
          id = node.parentId;
        }
        calls.reverse();
        return { headMessageId: head ?? null, calls, totals: totals.cache };
      });
      return context.json(answer, 200);
    })
    .post('/chats/:chatId/budgeted-call', jsonBody(budgetedCallSchema), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      const call = await chats.use(context.req.param('chatId'), userId, async (engine) => {
        const renderer = body.renderer ?? 'xml';
        const resolved = await engine.resolve({
          renderer: rendererFor(renderer),
          budget: { maxInputTokens: body.maxInputTokens },
        });
        if (resolved.budget === undefined) throw new Error('resolve({ budget }) gave no report');
        return { headMessageId: engine.headMessageId ?? null, renderer, budget: resolved.budget };
      });
      return context.json(call, 200);
    });
}
