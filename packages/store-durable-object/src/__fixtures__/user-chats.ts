import { DurableObject } from 'cloudflare:workers';
import { user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import type {
  ChatRecord,
  ListChatsInput,
  Page,
  SearchHit,
  SearchMessagesInput,
} from '@ctxgraph/fragments-core';
import {
  ChatListPublisher,
  type ChatListUpdate,
  DurableObjectChatList,
  DurableObjectContextStore,
  type StoreCallOutcome,
  searchUserChats,
  settleStoreCall,
  storeCallOutcome,
  type UserSearchPage,
} from '@ctxgraph/store-durable-object';

interface Env {
  LISTED_CHATS: DurableObjectNamespace<ListedChatObject>;
  USERS: DurableObjectNamespace<UserObject>;
}

/** One chat per object; every write to it updates its user's chat list. */
export class ListedChatObject extends DurableObject<Env> {
  store!: DurableObjectContextStore;
  publisher!: ChatListPublisher;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.store = new DurableObjectContextStore(ctx.storage);
      this.publisher = new ChatListPublisher(ctx.storage, this.store, {
        // The update goes to the user's object, over RPC.
        send: (update) => {
          const userId = update.type === 'chat' ? update.chat.userId : update.userId;
          return env.USERS.get(env.USERS.idFromName(userId)).apply(update);
        },
        // A failed send stays pending; the alarm sends it again.
        onError: () => void ctx.storage.setAlarm(Date.now() + 1_000),
      });
    });
  }

  /** A turn through the engine; answers once the user's list has it. */
  async say(chatId: string, userId: string, text: string): Promise<void> {
    const context = new ContextEngine({ store: this.store, chatId, userId });
    context.set(user(text));
    await context.save();
    await this.publisher.settled();
  }

  /** This chat's search, as an outcome (its errors keep their class across RPC). */
  searchMessages(input: SearchMessagesInput): Promise<StoreCallOutcome<Page<SearchHit>>> {
    return storeCallOutcome(() => this.store.searchMessages(input));
  }

  override async alarm(): Promise<void> {
    // Throwing makes the platform retry the alarm.
    if (!(await this.publisher.publish({ all: true }))) throw new Error('list not updated yet');
  }
}

/** One user per object: the user's chat list. */
export class UserObject extends DurableObject<Env> {
  list!: DurableObjectChatList;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.list = new DurableObjectChatList(ctx.storage);
    });
  }

  /** A chat object's update: applied once, however often it comes. */
  apply(update: ChatListUpdate): boolean {
    return this.list.apply(update);
  }

  /** The user's chats, most recent first, as `ContextStore.listChats` answers. */
  listChats(input: ListChatsInput): Promise<StoreCallOutcome<Page<ChatRecord>>> {
    return storeCallOutcome(async () => this.list.list(input));
  }

  chatIds(userId: string): string[] {
    return this.list.chatIds(userId);
  }
}

/** In the Worker: a search over every chat of the user, six chat objects at a time. */
export async function searchEverywhere(
  env: Env,
  userId: string,
  query: string,
): Promise<UserSearchPage> {
  const chats = env.USERS.get(env.USERS.idFromName(userId));
  return searchUserChats({
    userId,
    query,
    chatIds: await chats.chatIds(userId),
    concurrency: 6,
    searchChat: async (chatId, input) => {
      const chat = env.LISTED_CHATS.get(env.LISTED_CHATS.idFromName(chatId));
      return settleStoreCall(await chat.searchMessages(input));
    },
  });
}
