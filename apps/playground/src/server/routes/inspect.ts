import { Hono } from 'hono';
import { z } from 'zod';
import { DEFAULT_MODEL_ID } from '../playground-config';
import { readQuery, rendererSchema, userOf } from '../read-request';
import { rendererFor } from '../renderers';
import type { RouteDependencies } from './route-dependencies';

const querySchema = z.object({
  renderer: rendererSchema.optional(),
  modelId: z.string().min(1).max(200).optional(),
});

/** `GET /chats/:chatId/inspect?renderer=&modelId=`: the engine's inspect snapshot. */
export function inspectRoutes(dependencies: RouteDependencies): Hono {
  const { engines, defaultUserId, model } = dependencies;
  return new Hono().get('/chats/:chatId/inspect', async (context) => {
    const userId = userOf(context, defaultUserId);
    const query = readQuery(context, querySchema);
    const snapshot = await engines.use(context.req.param('chatId'), userId, (engine) =>
      engine.inspect({
        modelId: query.modelId ?? model?.modelId ?? DEFAULT_MODEL_ID,
        renderer: rendererFor(query.renderer ?? 'xml'),
      }),
    );
    return context.json(snapshot);
  });
}
