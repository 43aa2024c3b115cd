import type { ChatChangeListener } from '@ctxgraph/fragments-core';
import { ChangePoller, ChatWatchers, type PolledChat } from '@ctxgraph/fragments-core/store-kit';
import postgres from 'postgres';
import type { PostgresClient } from '../options';
import type { PostgresConnection } from './connection';
import { integer, text } from './rows';

// The change feed of `PostgresContextStore` (`watchChat`), started by the first watcher and
// stopped by the last (and by close()):
//
// - LISTEN on the store's channel (one per schema and prefix), on a connection of its own (a
//   one-connection client made from the store's client options, ended when the feed stops, so it
//   never keeps a process alive). The live-reply writes NOTIFY it in their own statement: a
//   start, stop, takeover or end of a reply, and its chunks, reach every process at once.
// - A poll of the watched chats' counters (version, updatedAt, live-reply revision, chunk
//   counts) every `pollIntervalMs`, one query for all of them, for the writes that send no
//   NOTIFY (a plain commit, a branch or checkpoint write, a deleted chat): plain saves stay
//   exactly as they were, and no commit takes PostgreSQL's notification lock.
//
// Behind PgBouncer in transaction mode LISTEN does not work (`changeFeed: { listen: false }`):
// the poll alone then carries every notice.

/** How the feed learns of changes. */
export interface ChangeFeedSettings {
  /** LISTEN for the live-reply writes' notices (false behind transaction pooling). */
  readonly listen: boolean;
  /** Milliseconds between two polls of the watched chats. */
  readonly pollIntervalMs: number;
}

/** How long to wait before trying LISTEN again after it failed, in milliseconds. */
const LISTEN_RETRY_MS = 1000;

/** The watchers of one store, fed by LISTEN and a poll. */
export class PostgresChangeFeed {
  readonly #db: PostgresConnection;
  readonly #client: PostgresClient;
  readonly #settings: ChangeFeedSettings;
  readonly #watchers: ChatWatchers;
  readonly #poller: ChangePoller;
  /** The one-connection client that LISTENs, while the feed runs. */
  #listener: postgres.Sql | undefined;
  /** True once LISTEN is in effect (until the feed stops). */
  #listening = false;
  #retry: ReturnType<typeof setTimeout> | undefined;
  /** Bumped by each stop: a LISTEN that completes after it is undone. */
  #generation = 0;

  constructor(db: PostgresConnection, client: PostgresClient, settings: ChangeFeedSettings) {
    this.#db = db;
    this.#client = client;
    this.#settings = settings;
    this.#watchers = new ChatWatchers({
      start: () => this.#start(),
      stop: () => this.#stop(),
      // A chat's first notice comes once the poll has read it (its baseline: any later change
      // shows against it) and LISTEN is up: from that read when LISTEN is up by then (or not
      // used), else when LISTEN comes up. So no change falls between the two.
      added: (chatId) => this.#poller.added(chatId),
      removed: (chatId) => this.#poller.removed(chatId),
    });
    this.#poller = new ChangePoller({
      watchers: this.#watchers,
      read: (chatIds) => this.#read(chatIds),
      intervalMs: settings.pollIntervalMs,
      timers: { setTimeout, clearTimeout },
      noticeFirstRead: () => this.#listening || !settings.listen,
    });
  }

  /** Subscribes to a chat's notices; returns the unsubscribe function. */
  watch(chatId: string, listener: ChatChangeListener): () => void {
    return this.#watchers.watch(chatId, listener);
  }

  /** Stops the feed and forgets every watcher (the store closes); ends the LISTEN connection. */
  async close(): Promise<void> {
    this.#watchers.close();
    await this.#ending;
  }

  #ending: Promise<void> = Promise.resolve();

  #start(): void {
    this.#poller.start();
    if (this.#settings.listen) this.#listen(this.#generation);
  }

  #stop(): void {
    this.#generation += 1;
    this.#poller.stop();
    this.#listening = false;
    if (this.#retry !== undefined) {
      clearTimeout(this.#retry);
      this.#retry = undefined;
    }
    const listener = this.#listener;
    this.#listener = undefined;
    if (listener !== undefined) {
      const ending = listener.end({ timeout: 0 }).catch(() => {});
      this.#ending = Promise.all([this.#ending, ending]).then(() => {});
    }
  }

  #listen(generation: number): void {
    // The store's client options (its host, credentials, TLS, …) for one more connection, as
    // postgres.js itself makes its listener; `max: 1` and no idle or lifetime limit.
    const options = {
      ...this.#client.options,
      max: 1,
      idle_timeout: null,
      max_lifetime: null,
      fetch_types: false,
    };
    const listener = postgres(options as unknown as postgres.Options<Record<string, never>>);
    this.#listener = listener;
    listener
      .listen(
        this.#db.names.changeChannel,
        (payload) => this.#notified(payload),
        () => {
          if (generation !== this.#generation) return;
          this.#listening = true;
          // Up (or up again after a reconnection: whatever happened meanwhile, read again). The
          // chats the poll has not read yet get their first notice from that read.
          for (const chatId of this.#watchers.chats())
            if (this.#poller.seen(chatId)) this.#watchers.emit({ type: 'chat', chatId });
        },
      )
      .catch(() => {
        if (generation !== this.#generation) return;
        // The poll carries the notices meanwhile; try again later.
        this.#listener = undefined;
        listener.end({ timeout: 0 }).catch(() => {});
        this.#retry = setTimeout(() => {
          this.#retry = undefined;
          if (generation === this.#generation) this.#listen(generation);
        }, LISTEN_RETRY_MS);
      });
  }

  #notified(payload: string): void {
    let notice: unknown;
    try {
      notice = JSON.parse(payload);
    } catch {
      return;
    }
    if (!Array.isArray(notice) || typeof notice[1] !== 'string') return;
    const chatId = notice[1];
    if (!this.#watchers.watches(chatId)) return;
    if (notice[0] === 'k' && typeof notice[2] === 'string' && typeof notice[3] === 'number') {
      this.#poller.noteChunks(chatId, notice[2], notice[3]);
      this.#watchers.emit({ type: 'chunks', chatId, replyId: notice[2], chunkCount: notice[3] });
      return;
    }
    this.#watchers.emit({ type: 'chat', chatId });
  }

  async #read(chatIds: readonly string[]): Promise<ReadonlyMap<string, PolledChat>> {
    const names = this.#db.names;
    const rows = await this.#db.run((sql) =>
      this.#db.query(
        sql,
        `SELECT c.chat_id, c.version, c.updated_at, coalesce(v.revision, 0),
           (SELECT json_agg(json_build_array(r.reply_id, r.chunk_count))::text
              FROM ${names.liveReplies} r WHERE r.chat_id = c.chat_id)
         FROM ${names.chats} c
         LEFT JOIN ${names.liveRevisions} v ON v.chat_id = c.chat_id
         WHERE c.chat_id = ANY ($1::text[])`,
        [chatIds as string[]],
      ),
    );
    const found = new Map<string, PolledChat>();
    for (const row of rows) {
      const replies =
        row[4] === null
          ? []
          : (JSON.parse(text(row[4])) as [string, number][]).map(
              ([replyId, chunkCount]): [string, number] => [replyId, integer(chunkCount)],
            );
      found.set(text(row[0]), {
        stamp: `${text(row[1])}:${text(row[3])}:${text(row[2])}`,
        replies,
      });
    }
    return found;
  }
}
