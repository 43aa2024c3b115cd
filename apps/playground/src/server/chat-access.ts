import type { ChatCycle } from '@ctxgraph/ai-sdk';
import type { ContextEngine } from '@ctxgraph/engine';

/** How every chat route reaches its chat's engine. */
export interface ChatAccess {
  /**
   * Runs `task` on the chat's engine, alone on that chat. Throws `ChatNotFoundError` for a chat
   * that does not exist (never creating it) and `OwnershipError` for another user's chat, before
   * the task runs.
   */
  use<T>(chatId: string, userId: string, task: (engine: ContextEngine) => Promise<T>): Promise<T>;
}

/**
 * The chat routes' way to a chat's engine: the chat cycle's `read` (the chat checked, then its
 * warm engine, kept warm after a task that went well and dropped, with whatever it left pending,
 * after one that failed), with two things of the playground's own:
 *
 * - the chat's context lane is loaded into each engine once (`loadContext()`), when it first
 *   serves the chat; from then on the engine holds it, and `PUT …/context` replaces it in place;
 * - tasks on one chat run one at a time, in arrival order (tasks on other chats run meanwhile),
 *   so the page's requests never interleave their steps, and the chat's next task gets the warm
 *   engine the last one left on the active branch.
 *
 * The cycle is used for these reads only (the model replies go through cycles of their own,
 * whose engines are positioned at each reply), so its engines stay on the chat's active branch.
 *
 * @example
 * ```ts
 * const chats = chatAccess(createChatCycle({ store, engine: { renderer, tokenizer } }));
 * const view = await chats.use(chatId, userId, (engine) => buildChatView(engine, store));
 * ```
 */
export function chatAccess(cycle: ChatCycle): ChatAccess {
  /** The end of each chat's queue of tasks: each task starts when the one before it settled. */
  const queues = new Map<string, Promise<unknown>>();
  /** Engines that hold their chat's context lane. */
  const withContext = new WeakSet<ContextEngine>();
  return {
    use(chatId, userId, task) {
      const run = (queues.get(chatId) ?? Promise.resolve()).then(() =>
        cycle.read(chatId, { userId }, async (engine) => {
          if (!withContext.has(engine)) {
            await engine.loadContext();
            withContext.add(engine);
          }
          return task(engine);
        }),
      );
      const tail = run.catch(() => undefined);
      queues.set(chatId, tail);
      // An idle chat keeps no queue.
      void tail.then(() => {
        if (queues.get(chatId) === tail) queues.delete(chatId);
      });
      return run;
    },
  };
}
