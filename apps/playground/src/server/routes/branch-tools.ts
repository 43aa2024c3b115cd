import { Hono } from 'hono';
import { z } from 'zod';
import { buildChatView } from '../chat-view';
import { jsonBody, nameSchema, queryOf, userOf } from '../read-request';
import type { RouteDependencies } from './route-dependencies';

const schemas = {
  compare: z.object({ left: nameSchema, right: nameSchema }).strict(),
  search: z
    .object({
      q: z.string().trim().min(1, 'type a word to search for').max(500),
      scope: z.enum(['branch', 'chat']).optional(),
      cursor: z.string().min(1).max(2000).optional(),
    })
    .strict(),
  deleteBranch: z
    .object({
      branch: nameSchema,
      activate: nameSchema.optional(),
      dryRun: z.boolean().optional(),
    })
    .strict(),
};

/**
 * The branch tools on `/chats/:chatId/…`, each on the engine's own API: `compare` (two branches
 * from their common ancestor, with each side's tokens and cost), `search` (the active branch or
 * the whole chat), `delete-branch` (with `dryRun`, what would go, changing nothing).
 */
export function branchToolRoutes(dependencies: RouteDependencies) {
  const { store, engines, defaultUserId } = dependencies;
  return new Hono()
    .get('/chats/:chatId/compare', queryOf(schemas.compare), async (context) => {
      const userId = userOf(context, defaultUserId);
      const query = context.req.valid('query');
      const report = await engines.use(context.req.param('chatId'), userId, (engine) =>
        engine.compareBranches(query.left, query.right),
      );
      return context.json(report, 200);
    })
    .get('/chats/:chatId/search', queryOf(schemas.search), async (context) => {
      const userId = userOf(context, defaultUserId);
      const query = context.req.valid('query');
      const page = await engines.use(context.req.param('chatId'), userId, (engine) =>
        engine.search(query.q, {
          scope: query.scope ?? 'branch',
          limit: 20,
          ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
        }),
      );
      return context.json(page, 200);
    })
    .post('/chats/:chatId/delete-branch', jsonBody(schemas.deleteBranch), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      const answer = await engines.use(context.req.param('chatId'), userId, async (engine) => {
        const result = await engine.deleteBranch(body.branch, {
          ...(body.activate === undefined ? {} : { activate: body.activate }),
          dryRun: body.dryRun ?? false,
        });
        return { result, view: await buildChatView(engine, store) };
      });
      return context.json(answer, 200);
    });
}
