import type { ContextStore } from '@ctxgraph/fragments-core';
import type { LanguageModel } from 'ai';
import type { EnginePool } from '../engine-pool';
import type { StoreDescription } from '../open-backend';
import type { ModelChoice } from '../playground-config';

/** What the route modules share: the store, the warm engines, the model and the settings. */
export interface RouteDependencies {
  /** The conversation store (listing, creating and deleting chats, the graph, the context lane). */
  readonly store: ContextStore;
  /** One warm engine per open chat; every chat route goes through it. */
  readonly engines: EnginePool;
  /** The user of a request without the `x-ctxgraph-user` header. */
  readonly defaultUserId: string;
  /** Shown on the page. */
  readonly storeDescription: StoreDescription;
  /** The configured model, shown on the page, or null. */
  readonly model: ModelChoice | null;
  /** The model that answers, or null (replies are written by hand). */
  readonly languageModel: LanguageModel | null;
  /** Where unexpected errors are reported. */
  readonly logError: (message: string, error: unknown) => void;
}
