import {
  type Page,
  type SearchHit,
  type SearchMessagesInput,
  ValidationError,
} from '@ctxgraph/fragments-core';
import type { ChatSession } from '../session/chat-session';
import { requireCapability } from '../session/store-abilities';

/** Options of `ContextEngine.search`. */
export interface SearchOptions {
  /**
   * Where to look: `'branch'` the messages the engine's branch shows (its chain), `'chat'` every
   * branch of the chat, `'user'` every chat of the engine's user.
   * @default 'branch'
   */
  scope?: 'branch' | 'chat' | 'user';
  /** With `scope: 'branch'`, another branch of the chat than the engine's. */
  branch?: string;
  /** Hits per page. @default 20 (at most 100) */
  limit?: number;
  /** `nextCursor` of the previous page of the same search. */
  cursor?: string;
  /**
   * Search as you type: the last word of the query matches every word that starts with it
   * (`fib` finds `fibonacci`); the others match whole words (see `SearchMessagesInput.prefix`).
   * Needs a store with `capabilities.searchPrefix` (`UnsupportedCapabilityError` otherwise).
   * @default false
   */
  prefix?: boolean;
}

/** `search()`: see `ContextEngine.search`. */
export async function searchChat(
  session: ChatSession,
  query: string,
  options: SearchOptions = {},
): Promise<Page<SearchHit>> {
  const store =
    options.prefix === true
      ? requireCapability(session.store, 'searchPrefix', 'search(query, { prefix: true })')
      : requireCapability(session.store, 'search', 'search(query)');
  // After opening: the engine's branch is the chat's active one only from then on.
  await session.open();
  const { chatId, userId } = session;
  return store.searchMessages(
    searchInput(query, options, { chatId, userId, branch: session.view.branch }),
  );
}

/** The store input for an engine's search; the store checks the rest. */
function searchInput(
  query: string,
  options: SearchOptions,
  engine: { readonly chatId: string; readonly userId: string; readonly branch: string },
): SearchMessagesInput {
  const scope = options.scope ?? 'branch';
  if (scope !== 'branch' && scope !== 'chat' && scope !== 'user')
    throw new ValidationError(
      `search(query, options): scope must be 'branch', 'chat' or 'user', received ${JSON.stringify(scope)}.`,
      { issues: [{ path: 'scope', message: "expected 'branch', 'chat' or 'user'" }] },
    );
  if (options.branch !== undefined && scope !== 'branch')
    throw new ValidationError(
      `search(query, options): branch is only for scope 'branch' (scope is '${scope}').`,
      { issues: [{ path: 'branch', message: "only with scope 'branch'" }] },
    );
  if (options.prefix !== undefined && typeof options.prefix !== 'boolean')
    throw new ValidationError(
      `search(query, options): prefix must be a boolean, received ${typeof options.prefix}.`,
      { issues: [{ path: 'prefix', message: 'expected a boolean' }] },
    );
  return {
    userId: engine.userId,
    query,
    ...(scope === 'user' ? {} : { chatId: engine.chatId }),
    ...(scope === 'branch' ? { branch: options.branch ?? engine.branch } : {}),
    ...(options.limit === undefined ? {} : { limit: options.limit }),
    ...(options.cursor === undefined ? {} : { cursor: options.cursor }),
    ...(options.prefix === true ? { prefix: true } : {}),
  };
}
