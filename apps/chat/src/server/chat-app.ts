import { serveStatic } from '@hono/node-server/serve-static';
import type { Hono } from 'hono';
import { type ChatApiOptions, createChatApi } from './chat-api';

/** Options of {@link createChatApp}. */
export interface ChatAppOptions extends ChatApiOptions {
  /** Serve the built client from this folder. */
  clientDirectory?: string;
}

/**
 * The reference chat app on Node: its HTTP API ({@link createChatApi}, the module the Workers
 * chat object runs too) and, with `clientDirectory`, the built page.
 */
export function createChatApp(options: ChatAppOptions): Hono {
  const app = createChatApi(options);
  if (options.clientDirectory) {
    app.use('/*', serveStatic({ root: options.clientDirectory }));
  }
  return app;
}
