import { Hono } from 'hono';
import { z } from 'zod';
import type { BranchComparisonView, BranchDeletion, SearchResults } from '../../shared/wire';
import { buildChatView } from '../chat-view';
import { nameSchema, readBody, readQuery, userOf } from '../read-request';
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
export function branchToolRoutes(dependencies: RouteDependencies): Hono {
  const { store, engines, defaultUserId } = dependencies;
  return new Hono()
    .get('/chats/:chatId/compare', async (context) => {
      const userId = userOf(context, defaultUserId);
      const query = readQuery(context, schemas.compare);
      const report: BranchComparisonView = await engines.use(
        context.req.param('chatId'),
        userId,
        (engine) => engine.compareBranches(query.left, query.right),
      );
      return context.json(report);
    })
    .get('/chats/:chatId/search', async (context) => {
      const userId = userOf(context, defaultUserId);
      const query = readQuery(context, schemas.search);
      const page: SearchResults = await engines.use(context.req.param('chatId'), userId, (engine) =>
        engine.search(query.q, {
          scope: query.scope ?? 'branch',
          limit: 20,
          ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
        }),
      );
      return context.json(page);
    })
    .post('/chats/:chatId/delete-branch', async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = await readBody(context, schemas.deleteBranch);
      const answer: BranchDeletion = await engines.use(
        context.req.param('chatId'),
        userId,
        async (engine) => {
          const result = await engine.deleteBranch(body.branch, {
            ...(body.activate === undefined ? {} : { activate: body.activate }),
            dryRun: body.dryRun ?? false,
          });
          return { result, view: await buildChatView(engine, store) };
        },
      );
      return context.json(answer);
    });
}
