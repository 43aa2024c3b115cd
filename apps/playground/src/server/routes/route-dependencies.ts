import type { ContextStore } from '@ctxgraph/fragments-core';
import type { LanguageModel } from 'ai';
import type { ChatAccess } from '../chat-access';
import type { StoreDescription } from '../open-backend';
import type { ModelChoice } from '../playground-config';

/** What the route modules share: the store, the way to a chat's engine, the model and the settings. */
export interface RouteDependencies {
  /** The conversation store (listing, creating and deleting chats, the graph, the context lane). */
  readonly store: ContextStore;
  /** Every chat route reaches its chat's (warm) engine through it: the chat cycle's `read`. */
  readonly chats: ChatAccess;
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
