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
      // `prefix` (the default): the last word matches as a prefix, for search as you type.
      match: z.enum(['prefix', 'words']).optional(),
    })
    .strict(),
  versions: z.object({ nodeId: z.string().min(1).max(200) }).strict(),
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
 * the whole chat), `versions` (a message's siblings, the engine's `versions()`), `delete-branch` (with `dryRun`, what would go, changing nothing).
 */
export function branchToolRoutes(dependencies: RouteDependencies) {
  const { store, chats, defaultUserId } = dependencies;
  return new Hono()
    .get('/chats/:chatId/compare', queryOf(schemas.compare), async (context) => {
      const userId = userOf(context, defaultUserId);
      const query = context.req.valid('query');
      const report = await chats.use(context.req.param('chatId'), userId, (engine) =>
        engine.compareBranches(query.left, query.right),
      );
      return context.json(report, 200);
    })
    .get('/chats/:chatId/search', queryOf(schemas.search), async (context) => {
      const userId = userOf(context, defaultUserId);
      const query = context.req.valid('query');
      const page = await chats.use(context.req.param('chatId'), userId, (engine) =>
        engine.search(query.q, {
          scope: query.scope ?? 'branch',
          limit: 20,
          ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
          // Prefix matching when the store offers it (every bundled store does); whole words
          // otherwise, rather than an error while the user types.
          ...(query.match !== 'words' && store.capabilities.searchPrefix === true
            ? { prefix: true }
            : {}),
        }),
      );
      return context.json(page, 200);
    })
    .get('/chats/:chatId/versions', queryOf(schemas.versions), async (context) => {
      const userId = userOf(context, defaultUserId);
      const { nodeId } = context.req.valid('query');
      // The engine's versions(): the node's siblings (same parent and role), oldest first, each
      // with the newest leaf below it (where that version's conversation continues).
      const versions = await chats.use(context.req.param('chatId'), userId, (engine) =>
        engine.versions(nodeId),
      );
      return context.json(
        {
          versions: versions.map((version) => ({
            nodeId: version.nodeId,
            messageId: version.messageId,
            leafNodeId: version.leafNodeId,
            createdAt: version.createdAt,
          })),
        },
        200,
      );
    })
    .post('/chats/:chatId/delete-branch', jsonBody(schemas.deleteBranch), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      const answer = await chats.use(context.req.param('chatId'), userId, async (engine) => {
        const result = await engine.deleteBranch(body.branch, {
          ...(body.activate === undefined ? {} : { activate: body.activate }),
          dryRun: body.dryRun ?? false,
        });
        return { result, view: await buildChatView(engine, store) };
      });
      return context.json(answer, 200);
    });
}
