import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import { z } from 'zod';
import { buildChatView } from '../chat-view';
import { jsonBody, queryOf, userOf } from '../read-request';
import type { RouteDependencies } from './route-dependencies';

const schemas = {
  list: z.object({
    cursor: z.string().min(1).optional(),
    limit: z.coerce.number().int().min(1).max(100).optional(),
  }),
  create: z.object({ title: z.string().trim().max(200).optional() }).strict(),
  rename: z.object({ title: z.string().trim().max(200).nullable() }).strict(),
};

/** `/chats`: list and create; `/chats/:chatId`: view, rename, delete. */
export function chatRoutes(dependencies: RouteDependencies) {
  const { store, chats, defaultUserId } = dependencies;
  return new Hono()
    .get('/chats', queryOf(schemas.list), async (context) => {
      const userId = userOf(context, defaultUserId);
      const query = context.req.valid('query');
      const page = await store.listChats({
        userId,
        limit: query.limit ?? 20,
        cursor: query.cursor,
      });
      return context.json(page, 200);
    })
    .post('/chats', jsonBody(schemas.create), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      const chatId = `chat-${randomUUID()}`;
      const title = body.title === undefined || body.title === '' ? 'Untitled chat' : body.title;
      await store.openChat({ chatId, userId, title });
      const view = await chats.use(chatId, userId, (engine) => buildChatView(engine, store));
      return context.json(view, 201);
    })
    .get('/chats/:chatId', async (context) => {
      const userId = userOf(context, defaultUserId);
      const view = await chats.use(context.req.param('chatId'), userId, (engine) =>
        buildChatView(engine, store),
      );
      return context.json(view, 200);
    })
    .patch('/chats/:chatId', jsonBody(schemas.rename), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      const view = await chats.use(context.req.param('chatId'), userId, async (engine) => {
        await engine.updateChat({ title: body.title === '' ? null : body.title });
        return buildChatView(engine, store);
      });
      return context.json(view, 200);
    })
    .delete('/chats/:chatId', async (context) => {
      const chatId = context.req.param('chatId');
      await chats.use(chatId, userOf(context, defaultUserId), async () => {
        // Deletes the chat's context lane with it. Requests queued behind this one find no chat
        // (each request checks the chat first).
        await store.deleteChat(chatId);
      });
      return context.json({ deleted: chatId }, 200);
    });
}
