// The worker that tries the PostgreSQL store from workerd: postgres.js's Cloudflare build
// (`cloudflare:sockets` for TCP, `node:buffer`, `node:events`, `node:stream` under
// `nodejs_compat`) against the URL the test binds as DATABASE_URL, in a schema of its own.
import { assistant, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { PostgresContextStore } from '@ctxgraph/store-postgres';

interface Environment {
  DATABASE_URL: string;
  SCHEMA: string;
}

async function roundTrip(environment: Environment): Promise<unknown> {
  const store = new PostgresContextStore({
    connectionString: environment.DATABASE_URL,
    schema: environment.SCHEMA,
  });
  try {
    const options = {
      store,
      chatId: 'edge-chat',
      userId: 'edge-user',
      renderer: new XmlRenderer(),
    };
    const engine = new ContextEngine(options);
    engine.set(role('You are terse.'), user('Hello from workerd', { id: 'q1' }));
    engine.set(assistant('Hello from PostgreSQL', { id: 'a1' }));
    const saved = await engine.save();
    const fresh = new ContextEngine(options);
    const { messages } = await fresh.resolve({ budget: { maxInputTokens: 1000 } });
    return { head: saved.headMessageId, messages: messages.map(({ id, role }) => ({ id, role })) };
  } finally {
    await store.close();
  }
}

const worker: { fetch(request: Request, environment: Environment): Promise<Response> } = {
  async fetch(_request, environment) {
    try {
      return Response.json(await roundTrip(environment));
    } catch (error) {
      const { name, message, stack } = error instanceof Error ? error : new Error(String(error));
      const code = (error as { code?: unknown }).code;
      return Response.json({ error: { name, message, code, stack } }, { status: 500 });
    }
  },
};

export default worker;
