import { DurableObject } from 'cloudflare:workers';
import type {
  CommitInput,
  CommitResult,
  OpenChatInput,
  OpenChatResult,
} from '@ctxgraph/fragments-core';
import {
  DurableObjectContextStore,
  type DurableObjectContextStoreOptions,
} from '../durable-object-context-store';
import { type StoreCallOutcome, storeCallOutcome } from '../rpc/store-call-outcome';

// The README's example (a chat object and the Worker that routes to it), as the Worker under test.
export { ChatObject, default } from './chat-worker';
// The README's chat list and user-wide search: a chat object that keeps its user's list, and the
// user's object.
export { ListedChatObject, UserObject } from './user-chats';

/**
 * The Durable Object the conformance tests run the store in: built as an app builds its chat
 * object (the store made in the constructor, under `blockConcurrencyWhile`), plus more stores
 * over the same storage on demand, as a reopened store (the conformance kit's `reopenStore`).
 */
export class TestChatObject extends DurableObject {
  /** The stores over this object's storage, by slot: 0 is the constructor's. */
  readonly stores: DurableObjectContextStore[] = [];

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.stores.push(new DurableObjectContextStore(ctx.storage));
    });
  }

  /** Another store over the same storage (with `options`: the kit's clock); returns its slot. */
  reopen(options?: DurableObjectContextStoreOptions): number {
    this.stores.push(new DurableObjectContextStore(this.ctx.storage, options));
    return this.stores.length - 1;
  }
}

/** A chat object whose store calls answer over RPC with their outcome (`storeCallOutcome`). */
export class OutcomeChatObject extends DurableObject {
  #store!: DurableObjectContextStore;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    void ctx.blockConcurrencyWhile(async () => {
      this.#store = new DurableObjectContextStore(ctx.storage);
    });
  }

  openChat(input: OpenChatInput): Promise<StoreCallOutcome<OpenChatResult>> {
    return storeCallOutcome(() => this.#store.openChat(input));
  }

  commit(input: CommitInput): Promise<StoreCallOutcome<CommitResult>> {
    return storeCallOutcome(() => this.#store.commit(input));
  }
}

/** An object with key-value storage only: the store must refuse it with a clear error. */
export class KeyValueObject extends DurableObject {}
