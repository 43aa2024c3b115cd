import {
  assertIdentifier,
  CHAT_PAGE_SIZE,
  ChatNotFoundError,
  type ContextStore,
  type PruneResult,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { requireCapability } from '../session/store-abilities';

/** Options of {@link pruneUserChats}. */
export interface PruneUserChatsOptions {
  /** Whose chats. */
  userId: string;
  /** Report what would go and change nothing. @default false */
  dryRun?: boolean;
  /** Chats per batch: one `listChats` page, then one `prune` per chat. @default 20 (at most 100) */
  batchSize?: number;
}

/** What {@link pruneUserChats} removed (or would remove), in all and per chat. */
export interface PruneUserChatsResult {
  /** True when nothing was changed. */
  dryRun: boolean;
  /** Chats looked at. */
  chats: number;
  /** Nodes removed in all. */
  nodes: number;
  /** UTF-8 bytes of their stored JSON in all. */
  bytes: number;
  /**
   * Each chat's result, in the order pruned: most recently updated first, then the chats written
   * to (or created) during the pass, which a listing from the start finds again.
   */
  results: PruneResult[];
}

/**
 * Prunes every chat of a user, a batch at a time (`listChats` pages of `batchSize`): in each
 * chat, removes the nodes no branch head and no checkpoint reaches. Each chat is its own atomic
 * write, safe while writers save to it. A write moves a chat to the front of the listing, behind
 * the pass's cursor, so the pass lists the chats again from the start until a whole listing holds
 * none it has not pruned yet (one more listing when nobody wrote; each chat is pruned once); a
 * chat deleted meanwhile is skipped. Needs a store with `capabilities.retention`.
 *
 * @example
 * ```ts
 * const report = await pruneUserChats(store, { userId: 'user-1', dryRun: true });
 * console.log(`${report.nodes} nodes (${report.bytes} bytes) would go`);
 * ```
 */
export async function pruneUserChats(
  store: ContextStore,
  options: PruneUserChatsOptions,
): Promise<PruneUserChatsResult> {
  const method = 'pruneUserChats(store, options)';
  if (typeof options !== 'object' || options === null)
    throw new ValidationError(`${method}: options must be an object with userId.`, {
      issues: [{ path: 'options', message: 'expected an object' }],
    });
  const { userId, dryRun, batchSize } = options;
  assertIdentifier(method, 'userId', userId);
  if (dryRun !== undefined && typeof dryRun !== 'boolean')
    throw new ValidationError(`${method}: dryRun must be a boolean.`, {
      issues: [{ path: 'dryRun', message: 'expected a boolean' }],
    });
  if (
    batchSize !== undefined &&
    (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > CHAT_PAGE_SIZE.max)
  )
    throw new ValidationError(
      `${method}: batchSize must be an integer from 1 to ${CHAT_PAGE_SIZE.max}, received ${String(batchSize)}.`,
      { issues: [{ path: 'batchSize', message: 'expected an integer from 1 to 100' }] },
    );
  const retaining = requireCapability(store, 'retention', method);
  const total: PruneUserChatsResult = {
    dryRun: dryRun === true,
    chats: 0,
    nodes: 0,
    bytes: 0,
    results: [],
  };
  // Pages come most recently updated first, so a chat written to during the pass moves in front
  // of the cursor: listing again from the start until a whole listing holds no chat not yet done
  // reaches it (a chat is pruned once, however often it moves).
  const done = new Set<string>();
  let reachedNew: boolean;
  do {
    reachedNew = false;
    let cursor: string | undefined;
    do {
      const page = await store.listChats({
        userId,
        limit: batchSize ?? CHAT_PAGE_SIZE.default,
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const chat of page.items) {
        if (done.has(chat.id)) continue;
        done.add(chat.id);
        reachedNew = true;
        let result: PruneResult;
        try {
          result = await retaining.prune({ chatId: chat.id, dryRun: dryRun === true });
        } catch (error) {
          // Deleted since it was listed: nothing left to prune.
          if (ChatNotFoundError.isInstance(error)) continue;
          throw error;
        }
        total.chats += 1;
        total.nodes += result.nodes;
        total.bytes += result.bytes;
        total.results.push(result);
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  } while (reachedNew);
  return total;
}
