import type { ContextStore } from '@ctxgraph/fragments-core';
import { watchObjectChats } from '../driver/change-feed';
import type { DurableObjectStorageLike } from '../driver/sql-storage';
import type { ChatListUpdate } from './durable-object-chat-list';

/** Options of {@link ChatListPublisher}. */
export interface ChatListPublisherOptions {
  /**
   * Sends an update to the chat's user object (`env.USERS.get(env.USERS.idFromName(userId))
   * .applyChatUpdate(update)`). A rejection keeps the chat pending: {@link ChatListPublisher.publish}
   * sends it again (from an alarm, say).
   */
  readonly send: (update: ChatListUpdate) => Promise<unknown>;
  /** Told when a send failed (the chat stays pending). @default console.error */
  readonly onError?: (error: unknown, chatId: string) => void;
}

/**
 * Keeps the chat lists of the users of this chat object current: after every committed write to
 * one of the object's chats (through any store over `storage`), it reads the chat (`getChat`)
 * and sends its record, or its removal, to the user's list ({@link DurableObjectChatList.apply}).
 *
 * Consistency: the list follows each chat **eventually**, usually within one call between the
 * objects, and never moves back (the list keeps the newest record it was sent, so a duplicate or
 * a late update changes nothing). Sends are serialized per object and always carry the chat as
 * it is when sent, so bursts of writes coalesce into one send. A send that fails leaves the chat
 * pending: `publish()` sends it again (call it from the object's `alarm()`), and
 * {@link ChatListPublisher.settled} tells whether everything was sent. An object that was evicted
 * between a write and its send catches up when it is next constructed and its publisher runs
 * `publish()` (it sends every chat of the object once).
 */
export class ChatListPublisher {
  readonly #store: Pick<ContextStore, 'getChat'>;
  readonly #storage: DurableObjectStorageLike;
  readonly #send: ChatListPublisherOptions['send'];
  readonly #onError: NonNullable<ChatListPublisherOptions['onError']>;
  readonly #dirty = new Set<string>();
  readonly #failed = new Set<string>();
  /** The last owner and `updatedAt` seen of each chat: a removal must still find its user. */
  readonly #known = new Map<string, { readonly userId: string; readonly updatedAt: number }>();
  readonly #unsubscribe: () => void;
  #running: Promise<void> | undefined;

  /**
   * Starts listening to the object's writes.
   * Build it after the store (its tables must exist).
   * @param storage The chat object's `ctx.storage` (the one its store is built over).
   * @param store The chat object's store (its `getChat` is read for each update).
   * @param options Where updates go.
   */
  constructor(
    storage: DurableObjectStorageLike,
    store: Pick<ContextStore, 'getChat'>,
    options: ChatListPublisherOptions,
  ) {
    this.#storage = storage;
    this.#store = store;
    this.#send = options.send;
    this.#onError = options.onError ?? ((error) => console.error(error));
    // The owners of the chats already here: a removal that is this instance's first write
    // still knows whose list to tell.
    for (const row of storage.sql
      .exec('SELECT id, user_id, updated_at FROM ctxgraph_chats')
      .toArray())
      this.#known.set(String(row.id), {
        userId: String(row.user_id),
        updatedAt: Number(row.updated_at),
      });
    this.#unsubscribe = watchObjectChats(storage, (chatId) => this.#mark(chatId));
  }

  /**
   * Sends every pending chat (and, with `all`, every chat of the object: what a newly constructed
   * object runs, in case it was evicted between a write and its send). Resolves true when nothing
   * is left pending.
   */
  publish(options: { readonly all?: boolean } = {}): Promise<boolean> {
    for (const chatId of this.#failed) this.#dirty.add(chatId);
    this.#failed.clear();
    if (options.all === true) {
      for (const row of this.#storage.sql.exec('SELECT id FROM ctxgraph_chats').toArray())
        this.#dirty.add(String(row.id));
    }
    this.#start();
    return this.settled();
  }

  /** Resolves once no send is in flight: true when every update was sent, false when some failed. */
  async settled(): Promise<boolean> {
    while (this.#running !== undefined) await this.#running;
    return this.#failed.size === 0;
  }

  /** The chats whose last update failed and waits for `publish()`. */
  pending(): string[] {
    return [...this.#failed];
  }

  /** Stops listening (the sends in flight finish). */
  close(): void {
    this.#unsubscribe();
  }

  #mark(chatId: string): void {
    this.#dirty.add(chatId);
    this.#start();
  }

  #start(): void {
    if (this.#running !== undefined || this.#dirty.size === 0) return;
    this.#running = this.#drain().finally(() => {
      this.#running = undefined;
      // Writes during the last send's await were marked meanwhile.
      this.#start();
    });
  }

  async #drain(): Promise<void> {
    // A microtask first, so a write's other notices (the same request's next writes) coalesce.
    await Promise.resolve();
    while (this.#dirty.size > 0) {
      const chatId: string | undefined = this.#dirty.values().next().value;
      if (chatId === undefined) break;
      this.#dirty.delete(chatId);
      try {
        const update = await this.#update(chatId);
        if (update !== undefined) await this.#send(update);
        if (update?.type === 'removed') this.#known.delete(chatId);
        this.#failed.delete(chatId);
      } catch (error) {
        this.#failed.add(chatId);
        this.#onError(error, chatId);
      }
    }
  }

  async #update(chatId: string): Promise<ChatListUpdate | undefined> {
    const chat = await this.#store.getChat(chatId);
    if (chat !== null) {
      this.#known.set(chatId, { userId: chat.userId, updatedAt: chat.updatedAt });
      return { type: 'chat', chat };
    }
    const known = this.#known.get(chatId);
    // A chat this object never held a record of: no list can hold it through this object.
    if (known === undefined) return undefined;
    return {
      type: 'removed',
      chatId,
      userId: known.userId,
      at: Math.max(Date.now(), known.updatedAt),
    };
  }
}
