/**
 * What one store connection knows of which chats are searched, for a store whose search index
 * is brought up to date lazily (by the first search of a chat) and then kept up to date by each
 * save (a save indexes its new messages with the write when the index marks, read under the
 * write's lock, say the index was current just before it).
 *
 * - The chats known to be searched: a search through this connection found or brought their
 *   index up to date, a save found their index marks (someone, maybe another process, searched
 *   them), or a user who searched through this connection opened them. A store that must compute
 *   a save's search words before it can read the marks (PostgreSQL: one statement) computes them
 *   only for these chats.
 * - The users who searched through this connection: their new chats are indexed from the first
 *   save (a chat with no message yet lacks nothing in the index).
 * - The chats this connection wrote to and left behind (a save that could not index with the
 *   write): a search may skip its read-only look at the marks (it would only find them behind).
 *
 * A hint, never the truth: whoever acts on it reads the marks again under a lock, and a chat
 * another process wrote to is found behind as before. Bounded: past 4,096 chats (or users) it
 * starts over, which only costs a catch-up. An app that never searches keeps every set empty
 * and pays nothing.
 */
export class IndexHints {
  readonly #searched = new Set<string>();
  readonly #behind = new Set<string>();
  readonly #users = new Set<string>();

  /** A search of `chatId` found its index up to date, or brought it up to date. */
  current(chatId: string): void {
    this.#keep(chatId);
    this.#behind.delete(chatId);
  }

  /** A search by `userId` (of one of their chats, or of all) went through this connection. */
  userSearched(userId: string): void {
    if (this.#users.has(userId)) return;
    if (this.#users.size >= 4096) this.#users.clear();
    this.#users.add(userId);
  }

  /** Whether `userId` searched through this connection. */
  userSearches(userId: string): boolean {
    return this.#users.has(userId);
  }

  /**
   * `userId` opened `chatId` through this connection: a chat of a user who searches is taken
   * for searched (so its first save, when it is new, computes its words and indexes them).
   */
  opened(chatId: string, userId: string): void {
    if (this.#users.has(userId)) this.#keep(chatId);
  }

  /**
   * A save to `chatId` read its index marks: `found` when it has some (a search, here or in
   * another process, indexed it), which makes it a searched chat; none, and it is not one.
   */
  marksFound(chatId: string, found: boolean): void {
    if (found) this.#keep(chatId);
    else if (this.#searched.delete(chatId)) this.#behind.delete(chatId);
  }

  /** Whether `chatId` is known to be searched. */
  searched(chatId: string): boolean {
    return this.#searched.has(chatId);
  }

  /** This connection wrote to `chatId` and left its index behind. */
  wrote(chatId: string): void {
    if (this.#searched.has(chatId)) this.#behind.add(chatId);
  }

  /** Whether this connection wrote to `chatId` since its last search brought it up to date. */
  behind(chatId: string): boolean {
    return this.#behind.has(chatId);
  }

  #keep(chatId: string): void {
    if (this.#searched.has(chatId)) return;
    if (this.#searched.size >= 4096) {
      this.#searched.clear();
      this.#behind.clear();
    }
    this.#searched.add(chatId);
  }
}
