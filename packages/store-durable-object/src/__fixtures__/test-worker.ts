import { DurableObject } from 'cloudflare:workers';
import { DurableObjectContextStore } from '../durable-object-context-store';

// The README's example (a chat object and the Worker that routes to it), as the Worker under test.
export { ChatObject, default } from './chat-worker';

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

  /** Another store over the same storage; returns its slot. */
  reopen(): number {
    this.stores.push(new DurableObjectContextStore(this.ctx.storage));
    return this.stores.length - 1;
  }
}
