import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { LanguageModel } from 'ai';
import { openBackend, type PlaygroundBackend } from './open-backend';
import { createPlaygroundApp } from './playground-app';
import type { PlaygroundConfig } from './playground-config';

/** A running playground server. */
export interface RunningPlayground {
  /** The address to open in a browser. */
  readonly url: string;
  /** The store and context repository it uses. */
  readonly backend: PlaygroundBackend;
  /** Stops listening and closes the store. */
  close(): Promise<void>;
}

/** Options of {@link startPlayground} beyond the configuration. */
export interface StartPlaygroundOptions {
  /** The built client to serve (dist/client). */
  readonly clientDirectory?: string;
  /** A language model to use instead of the configured one (tests). */
  readonly languageModel?: LanguageModel;
}

/**
 * Opens the store and serves the API and page on one port (port 0 picks a free one).
 *
 * @example
 * ```ts
 * const running = await startPlayground(readPlaygroundConfig(process.env), { clientDirectory });
 * console.log(running.url);
 * ```
 */
export async function startPlayground(
  config: PlaygroundConfig,
  options: StartPlaygroundOptions = {},
): Promise<RunningPlayground> {
  const backend = await openBackend(config.store);
  const app = createPlaygroundApp({
    store: backend.store,
    storeDescription: backend.description,
    model: config.model,
    defaultUserId: config.defaultUserId,
    clientDirectory: options.clientDirectory,
    languageModel: options.languageModel,
  });
  let server: ReturnType<typeof serve>;
  try {
    server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
      const started = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, () =>
        resolve(started),
      );
      started.once('error', reject);
    });
  } catch (error) {
    // Nothing listens: close the store we opened, and say what to do when the port is taken
    // (typically a playground already running).
    await backend.close();
    if ((error as NodeJS.ErrnoException | null)?.code === 'EADDRINUSE') {
      throw new Error(
        `Port ${config.port} on ${config.host} is already in use (is another playground running?). Stop it, or start on another port: PORT=${config.port === 0 ? 5174 : config.port + 1} npx -y pnpm@10.34.9 playground`,
        { cause: error },
      );
    }
    throw error;
  }
  const address = server.address() as AddressInfo;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}/`,
    backend,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await backend.close();
    },
  };
}
