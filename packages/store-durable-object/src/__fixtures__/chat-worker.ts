import { DurableObject } from 'cloudflare:workers';
import { user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { DurableObjectContextStore } from '@ctxgraph/store-durable-object';

interface Env {
  CHATS: DurableObjectNamespace<ChatObject>;
}

/** One chat per object; its store keeps the chat in the object's own SQLite. */
export class ChatObject extends DurableObject<Env> {
  #store!: DurableObjectContextStore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // The tables exist before the first call reaches the object.
    void ctx.blockConcurrencyWhile(async () => {
      this.#store = new DurableObjectContextStore(ctx.storage);
    });
  }

  /** An RPC method: the same engine code as on Node, in the chat's object. */
  async say(chatId: string, userId: string, text: string): Promise<string[]> {
    const context = new ContextEngine({ store: this.#store, chatId, userId });
    context.set(user(text));
    await context.save();
    const { messages } = await context.resolve({ renderer: new XmlRenderer() });
    return messages.flatMap((message) =>
      message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])),
    );
  }
}

// The Worker reaches the chat's object by the chat id, and calls it over RPC.
const worker: ExportedHandler<Env> = {
  async fetch(request, env) {
    const { chatId, userId, text } = await request.json<{
      chatId: string;
      userId: string;
      text: string;
    }>();
    const chat = env.CHATS.get(env.CHATS.idFromName(chatId));
    return Response.json(await chat.say(chatId, userId, text));
  },
};

export default worker;
