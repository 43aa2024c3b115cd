/**
 * What one store connection knows of the chats it has searched and of its own writes to them,
 * for a store whose search index is brought up to date lazily. Two uses: a save to a searched
 * chat may index its new messages with the write (when the index marks, read under the write's
 * lock, say the index was current just before it), and a search may skip a read-only look at the
 * marks when this connection wrote to the chat since its last catch-up (the look would only find
 * it behind). A hint, never the truth: whoever acts on it reads the marks again under a lock,
 * and a chat another process wrote to is found behind as before. Bounded: past 4,096 searched
 * chats it starts over, which only costs a catch-up. An app that never searches keeps both sets
 * empty and pays nothing.
 */
export class IndexHints {
  readonly #searched = new Set<string>();
  readonly #behind = new Set<string>();

  /** A search of `chatId` found its index up to date, or brought it up to date. */
  current(chatId: string): void {
    if (this.#searched.size >= 4096) {
      this.#searched.clear();
      this.#behind.clear();
    }
    this.#searched.add(chatId);
    this.#behind.delete(chatId);
  }

  /** Whether a search through this connection found or brought `chatId`'s index up to date. */
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
}
