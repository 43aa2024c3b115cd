import type { ContextEngine } from '@ctxgraph/engine';
import {
  ChatNotFoundError,
  type ChatRecord,
  type ContextStore,
  OwnershipError,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { AttachedChat, type CycleEngineOptions } from './attach';
import { WarmEngines } from './warm-engines';

/**
 * The cycle's engines: each request's engine is the chat's warm one when the cycle keeps one for
 * this user and this chat, else a new one; it goes back to the pool when the request ended well
 * ({@link WarmEngines}). A request never shares its engine: while one holds it, another request
 * on the chat opens its own.
 */
export class ChatEngines<UI_MESSAGE extends UIMessage = UIMessage> {
  readonly #store: ContextStore;
  readonly #options: CycleEngineOptions;
  readonly #warm: WarmEngines<UI_MESSAGE>;

  constructor(store: ContextStore, options: CycleEngineOptions, warmEngines: number) {
    this.#store = store;
    this.#options = options;
    this.#warm = new WarmEngines<UI_MESSAGE>(warmEngines);
  }

  /** The chat when it exists and belongs to `userId`, else null (a read only: nothing is created). */
  async owned(chatId: string, userId: string): Promise<ChatRecord | null> {
    const chat = await this.#store.getChat(chatId);
    return chat !== null && chat.userId === userId ? chat : null;
  }

  /**
   * The chat's engine for one request: its warm one, taken out of the pool, when `owned` (the
   * chat as just read) is the chat that engine was opened on, else a new engine (for a chat that
   * does not exist yet, too: its first write creates it). The request reads the chat once:
   * `owned` is the engine's snapshot of it for the whole request (`engine.useSnapshot`), so a
   * warm engine reads nothing more to place the request and resolve it (its writes are
   * compare-and-set on the head it knows, so a snapshot another process moved past never
   * overwrites anything).
   */
  take(chatId: string, userId: string, owned: ChatRecord | null): AttachedChat<UI_MESSAGE> {
    const kept = owned === null ? undefined : this.#warm.take(owned, userId);
    const attached =
      kept ?? new AttachedChat<UI_MESSAGE>(this.#store, chatId, userId, this.#options);
    attached.engine.useSnapshot(owned);
    return attached;
  }

  /** Gives back the engine of a request that ended well: it serves the chat's next request. */
  give(attached: AttachedChat<UI_MESSAGE>): void {
    this.#warm.give(attached);
  }

  /**
   * Runs `task` on the chat's engine, which no other request holds meanwhile, and gives the engine
   * back when the task went well (an engine whose task failed is dropped, with whatever it held
   * pending). The chat is checked first, with one read of it: `ChatNotFoundError` for a chat that
   * does not exist (it is not created), `OwnershipError` for another user's, before the task runs.
   */
  async read<T>(
    chatId: string,
    userId: string,
    task: (engine: ContextEngine) => T | Promise<T>,
  ): Promise<T> {
    const chat = await this.#store.getChat(chatId);
    if (chat === null) throw new ChatNotFoundError(chatId);
    if (chat.userId !== userId) throw new OwnershipError(chatId, userId);
    const attached = this.take(chatId, userId, chat);
    const result = await task(attached.engine);
    this.give(attached);
    return result;
  }
}
