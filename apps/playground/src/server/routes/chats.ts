import { randomUUID } from 'node:crypto';
import { Hono } from 'hono';
import { z } from 'zod';
import type { ChatPage, ChatView, DeletedChat } from '../../shared/wire';
import { buildChatView } from '../chat-view';
import { readBody, readQuery, userOf } from '../read-request';
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
export function chatRoutes(dependencies: RouteDependencies): Hono {
  const { store, engines, defaultUserId } = dependencies;
  return new Hono()
    .get('/chats', async (context) => {
      const userId = userOf(context, defaultUserId);
      const query = readQuery(context, schemas.list);
      const page: ChatPage = await store.listChats({
        userId,
        limit: query.limit ?? 20,
        cursor: query.cursor,
      });
      return context.json(page);
    })
    .post('/chats', async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = await readBody(context, schemas.create);
      const chatId = `chat-${randomUUID()}`;
      const title = body.title === undefined || body.title === '' ? 'Untitled chat' : body.title;
      await store.openChat({ chatId, userId, title });
      const view: ChatView = await engines.use(chatId, userId, (engine) =>
        buildChatView(engine, store),
      );
      return context.json(view, 201);
    })
    .get('/chats/:chatId', async (context) => {
      const userId = userOf(context, defaultUserId);
      const view: ChatView = await engines.use(context.req.param('chatId'), userId, (engine) =>
        buildChatView(engine, store),
      );
      return context.json(view);
    })
    .patch('/chats/:chatId', async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = await readBody(context, schemas.rename);
      const view: ChatView = await engines.use(
        context.req.param('chatId'),
        userId,
        async (engine) => {
          await engine.updateChat({ title: body.title === '' ? null : body.title });
          return buildChatView(engine, store);
        },
      );
      return context.json(view);
    })
    .delete('/chats/:chatId', async (context) => {
      const chatId = context.req.param('chatId');
      await engines.use(chatId, userOf(context, defaultUserId), async () => {
        // Deletes the chat's context lane with it.
        await store.deleteChat(chatId);
        // Requests queued behind this one start over and find no chat.
        engines.evict(chatId);
      });
      const deleted: DeletedChat = { deleted: chatId };
      return context.json(deleted);
    });
}
