import type { ContextEngine } from '@ctxgraph/engine';
import { ContextConflictError, type ContextFragment } from '@ctxgraph/fragments-core';
import { Hono } from 'hono';
import { z } from 'zod';
import { buildChatView } from '../chat-view';
import { decodeContext, encodeContext } from '../context-codec';
import { jsonBody, userOf } from '../read-request';
import { renderPreviews } from '../renderers';
import type { RouteDependencies } from './route-dependencies';

const contextSchema = z.object({ fragments: z.array(z.unknown()) }).strict();

/**
 * Makes `fragments` the engine's context and saves it to the store's context lane. A PUT replaces
 * the whole context, so when another server saved the lane since this engine read it
 * (`ContextConflictError`), the engine reads the new revision and saves over it once.
 */
async function storeContext(
  engine: ContextEngine,
  fragments: readonly ContextFragment[],
): Promise<void> {
  engine.replaceContext(fragments);
  try {
    await engine.saveContext();
  } catch (error) {
    if (!ContextConflictError.isInstance(error)) throw error;
    await engine.loadContext();
    engine.replaceContext(fragments);
    await engine.saveContext();
  }
}

/** `PUT /chats/:chatId/context`: replace a chat's context; `POST /preview`: render a draft. */
export function contextRoutes(dependencies: RouteDependencies) {
  const { store, chats, defaultUserId } = dependencies;
  return new Hono()
    .put('/chats/:chatId/context', jsonBody(contextSchema), async (context) => {
      const userId = userOf(context, defaultUserId);
      const body = context.req.valid('json');
      const chatId = context.req.param('chatId');
      const view = await chats.use(chatId, userId, async (engine) => {
        // Decode first: a bad fragment is refused before anything is stored.
        const fragments = decodeContext(body.fragments);
        // Should the save fail, the engine holds a context the store may not: the task fails, so
        // the engine is dropped and the next request loads the context afresh.
        await storeContext(engine, fragments);
        return buildChatView(engine, store);
      });
      return context.json(view, 200);
    })
    .post('/preview', jsonBody(contextSchema), async (context) => {
      const fragments = decodeContext(context.req.valid('json').fragments);
      const preview = { fragments: encodeContext(fragments), prompts: renderPreviews(fragments) };
      return context.json(preview, 200);
    });
}
