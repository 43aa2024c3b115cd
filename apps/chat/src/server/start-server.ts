import type { AddressInfo } from 'node:net';
import type { ContextStore } from '@ctxgraph/fragments-core';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import { serve } from '@hono/node-server';
import type { LanguageModel } from 'ai';
import { type ChatAppOptions, createChatApp } from './chat-app';

/** Options of {@link startChatServer}. */
export interface StartChatServerOptions {
  /** The SQLite file: a store is opened on it, and closed with the server. */
  sqlitePath?: string;
  /** A store to use instead of a SQLite file (the tests run the app on PostgreSQL too); its owner closes it. */
  store?: ContextStore;
  /** The model that answers. */
  model: LanguageModel;
  /** 0 picks a free port. */
  port: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** The cycle's live replies (see `ChatAppOptions.live`). @default on */
  live?: ChatAppOptions['live'];
  /** Serve the built client from this folder. */
  clientDirectory?: string;
  /** Told how long ctxgraph's parts of each turn took. */
  onTiming?: (entry: { phase: 'begin' | 'save'; ms: number }) => void;
}

/** A running chat server. */
export interface RunningChatServer {
  readonly url: string;
  readonly port: number;
  readonly store: ContextStore;
  close(): Promise<void>;
}

/** Serves the app on a real port, on a SQLite file or the store given; `close()` closes what it opened. */
export async function startChatServer(options: StartChatServerOptions): Promise<RunningChatServer> {
  if ((options.sqlitePath === undefined) === (options.store === undefined)) {
    throw new Error('startChatServer(options): give either sqlitePath or store.');
  }
  const store = options.store ?? new SqliteContextStore(options.sqlitePath as string);
  const app = createChatApp({
    store,
    model: options.model,
    ...(options.live === undefined ? {} : { live: options.live }),
    ...(options.clientDirectory ? { clientDirectory: options.clientDirectory } : {}),
    ...(options.onTiming ? { onTiming: options.onTiming } : {}),
  });
  const host = options.host ?? '127.0.0.1';
  return new Promise((resolve) => {
    const server = serve(
      { fetch: app.fetch, port: options.port, hostname: host },
      (info: AddressInfo) => {
        resolve({
          url: `http://${host}:${info.port}`,
          port: info.port,
          store,
          close: () =>
            new Promise<void>((done) => {
              server.close(() => {
                if (options.store === undefined) store.close().finally(done);
                else done();
              });
              (server as { closeAllConnections?: () => void }).closeAllConnections?.();
            }),
        });
      },
    );
  });
}
