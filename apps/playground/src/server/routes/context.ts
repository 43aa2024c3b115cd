import { Hono } from 'hono';
import { z } from 'zod';
import type { ChatView, PreviewResult, SerializedFragment } from '../../shared/wire';
import { buildChatView } from '../chat-view';
import { decodeContext, encodeContext } from '../context-codec';
import { readBody, userOf } from '../read-request';
import { renderPreviews } from '../renderers';
import type { RouteDependencies } from './route-dependencies';

const contextSchema = z.object({ fragments: z.array(z.unknown()) }).strict();

/** `PUT /chats/:chatId/context`: replace a chat's context; `POST /preview`: render a draft. */
export function contextRoutes(dependencies: RouteDependencies): Hono {
  const { store, contexts, engines, defaultUserId } = dependencies;
  return new Hono()
    .put('/chats/:chatId/context', async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = await readBody(context, contextSchema);
      const chatId = context.req.param('chatId');
      const view: ChatView = await engines.use(chatId, userId, async (engine) => {
        // Decode first: a bad fragment is refused before anything is stored.
        const fragments = decodeContext(body.fragments);
        await contexts.save(chatId, encodeContext(fragments));
        // The warm engine takes the new context as it is stored: no reload.
        engine.replaceContext(fragments);
        return buildChatView(engine, store);
      });
      return context.json(view);
    })
    .post('/preview', async (context) => {
      const body = await readBody(context, contextSchema);
      const fragments = decodeContext(body.fragments);
      const preview: PreviewResult = {
        fragments: encodeContext(fragments) as SerializedFragment[],
        prompts: renderPreviews(fragments),
      };
      return context.json(preview);
    });
}
