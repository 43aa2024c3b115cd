import { DEFAULT_MODEL_PRICES } from '@ctxgraph/engine';
import { Hono } from 'hono';
import { RENDERER_NAMES, type RendererName } from '../../shared/wire';
import { DEFAULT_MODEL_ID } from '../playground-config';
import type { RouteDependencies } from './route-dependencies';

/** `GET /info`: the store, the default user, the model, the renderers and the priced models. */
export function infoRoutes(dependencies: RouteDependencies) {
  const { model } = dependencies;
  const info = {
    defaultUserId: dependencies.defaultUserId,
    store: dependencies.storeDescription,
    model: model ? { modelId: model.modelId, baseURL: model.baseURL ?? null } : null,
    renderers: [...RENDERER_NAMES] as RendererName[],
    pricedModels: Object.keys(DEFAULT_MODEL_PRICES),
    defaultModelId: model?.modelId ?? DEFAULT_MODEL_ID,
  };
  return new Hono().get('/info', (context) => context.json(info, 200));
}
