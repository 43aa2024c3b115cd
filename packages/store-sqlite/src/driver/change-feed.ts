import type { ChatChangeListener } from '@ctxgraph/fragments-core';
import { ChangePoller, ChatWatchers, type PolledChat } from '@ctxgraph/fragments-core/store-kit';
import type { SqliteConnection } from './connection';

// The change feed of `SqliteContextStore` (`watchChat`). While something watches, one timer per
// store asks SQLite whether anything was committed since its last look: `PRAGMA data_version`
// moves when another connection (another store object, another process) commits to the file, and
// `total_changes()` when this connection writes. Only then does it read the watched chats'
// counters (version, updatedAt, live-reply revision, chunk counts) and turn the differences into
// notices. The store's own live-reply writes are announced at once as well.

/** What a look at the file found: `data_version` and `total_changes()`. */
interface FileState {
  readonly dataVersion: number;
  readonly totalChanges: number;
}

interface ChatCounters {
  id: string;
  version: number;
  updated_at: number;
  revision: number | null;
}

interface ReplyCount {
  chat_id: string;
  reply_id: string;
  chunk_count: number;
}

/** The watchers of one store, fed by a poll of its file. */
export class SqliteChangeFeed {
  readonly #db: SqliteConnection;
  readonly #watchers: ChatWatchers;
  readonly #poller: ChangePoller;
  #last: FileState | undefined;
  #watching = false;

  constructor(db: SqliteConnection, intervalMs: number) {
    this.#db = db;
    // The watchers start and stop the poll, which reads the chats they watch.
    const source = {
      start: () => {
        this.#last = undefined;
        this.#watching = true;
        this.#poller.start();
      },
      stop: () => {
        this.#watching = false;
        this.#poller.stop();
      },
      added: (chatId: string) => this.#poller.added(chatId),
      removed: (chatId: string) => this.#poller.removed(chatId),
    };
    this.#watchers = new ChatWatchers(source);
    this.#poller = new ChangePoller({
      watchers: this.#watchers,
      read: (chatIds, fresh) => this.#read(chatIds, fresh),
      intervalMs,
      timers: { setTimeout, clearTimeout },
    });
  }

  /** Subscribes to a chat's notices; returns the unsubscribe function. */
  watch(chatId: string, listener: ChatChangeListener): () => void {
    return this.#watchers.watch(chatId, listener);
  }

  /** This store changed the chat (a live-reply write): a notice now, not at the next look. */
  changed(chatId: string): void {
    this.#watchers.emit({ type: 'chat', chatId });
  }

  /** This store appended chunks: a notice now, and the next look does not repeat it. */
  appended(chatId: string, replyId: string, chunkCount: number): void {
    this.#poller.noteChunks(chatId, replyId, chunkCount);
    this.#watchers.emit({ type: 'chunks', chatId, replyId, chunkCount });
  }

  /**
   * Runs `append`, a chunk append of this store (announced by {@link appended}), so that the next
   * look does not read the watched chats for it alone: when nothing was written through this
   * connection since the last look (its count of changes the same just before the append), the
   * count after the append becomes the look's. A write of anyone else still shows: another
   * connection's in `data_version`, this connection's (another store object on the same
   * database) in a count that moved before the append. A live reply's writer appends every few
   * tens of milliseconds, and its own watcher keeps the poll running meanwhile.
   */
  ownAppend<T>(append: () => T): T {
    const last = this.#last;
    if (!this.#watching || last === undefined) return append();
    const before = this.#totalChanges();
    const result = append();
    if (before === last.totalChanges && this.#last === last)
      this.#last = { dataVersion: last.dataVersion, totalChanges: this.#totalChanges() };
    return result;
  }

  #totalChanges(): number {
    return this.#db.statement('SELECT total_changes()').pluck().get() as number;
  }

  /** Stops the poll and forgets every watcher (the store closes). */
  close(): void {
    this.#watchers.close();
  }

  #read(chatIds: readonly string[], fresh: boolean): ReadonlyMap<string, PolledChat> | undefined {
    const db = this.#db;
    return db.run('watchChat(chatId, listener)', () => {
      const state = db
        .statement(
          'SELECT (SELECT data_version FROM pragma_data_version()) AS dataVersion, total_changes() AS totalChanges',
        )
        .get() as FileState;
      const last = this.#last;
      this.#last = state;
      if (
        !fresh &&
        last !== undefined &&
        last.dataVersion === state.dataVersion &&
        last.totalChanges === state.totalChanges
      )
        return undefined;
      return db.read(() => {
        const t = db.tables;
        const ids = JSON.stringify(chatIds);
        const chats = db
          .statement(
            `SELECT c.id, c.version, c.updated_at, r.revision FROM ${t.chats} c
             LEFT JOIN ${t.liveRevisions} r ON r.chat_id = c.id
             WHERE c.id IN (SELECT value FROM json_each(?))`,
          )
          .all(ids) as ChatCounters[];
        const replies = db
          .statement(
            `SELECT chat_id, reply_id, chunk_count FROM ${t.liveReplies}
             WHERE chat_id IN (SELECT value FROM json_each(?))`,
          )
          .all(ids) as ReplyCount[];
        const found = new Map<string, { stamp: string; replies: [string, number][] }>();
        for (const chat of chats) {
          found.set(chat.id, {
            stamp: `${chat.version}:${chat.revision ?? 0}:${chat.updated_at}`,
            replies: [],
          });
        }
        for (const reply of replies)
          found.get(reply.chat_id)?.replies.push([reply.reply_id, reply.chunk_count]);
        return found;
      });
    });
  }
}
