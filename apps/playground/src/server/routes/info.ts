import { Hono } from 'hono';
import { type PlaygroundInfo, RENDERER_NAMES } from '../../shared/wire';
import type { RouteDependencies } from './route-dependencies';

/** `GET /info`: the store, the default user, the model and the renderers. */
export function infoRoutes(dependencies: RouteDependencies): Hono {
  const { model } = dependencies;
  const info: PlaygroundInfo = {
    defaultUserId: dependencies.defaultUserId,
    store: dependencies.storeDescription,
    model: model ? { modelId: model.modelId, baseURL: model.baseURL ?? null } : null,
    renderers: [...RENDERER_NAMES],
  };
  return new Hono().get('/info', (context) => context.json(info));
}
