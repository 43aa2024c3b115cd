import type { ChatRecord } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import type { AttachedChat } from './attach';

/**
 * Idle request engines kept between requests, at most one per chat and user, least recently
 * used dropped first. A request takes its chat's engine out (so no two requests ever share one:
 * concurrent requests on a chat get an engine each) and gives it back once its turn ended well;
 * an engine that saw an error is never given back. A warm engine re-reads only what changed in
 * the store (the chat's revision and `rewrittenAt` tell it, whichever process wrote), so a turn on
 * a chat it holds costs the new messages, not the history.
 */
export class WarmEngines<UI_MESSAGE extends UIMessage> {
  readonly #capacity: number;
  /** By `key()`, in least-recently-used order (a give moves its chat to the end). */
  readonly #idle = new Map<string, { attached: AttachedChat<UI_MESSAGE>; chat: ChatRecord }>();

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** How many engines are idle. */
  get size(): number {
    return this.#idle.size;
  }

  /**
   * The chat's idle engine, taken out of the pool; undefined when there is none, or when it was
   * opened on another chat of the same id, deleted and made again since: `chat` (as just read)
   * was created at another time, or is at a revision below the one the engine saw (a chat's revision
   * never goes down; a chat made again in the same millisecond starts over from none).
   */
  take(chat: ChatRecord, userId: string): AttachedChat<UI_MESSAGE> | undefined {
    const id = key(chat.id, userId);
    const entry = this.#idle.get(id);
    if (entry === undefined) return undefined;
    this.#idle.delete(id);
    const same = entry.chat.createdAt === chat.createdAt && entry.chat.revision <= chat.revision;
    return same ? entry.attached : undefined;
  }

  /**
   * Keeps an engine whose request ended well, replacing the chat's idle one (the newest engine
   * has seen the most); the least recently used beyond capacity are dropped.
   */
  give(attached: AttachedChat<UI_MESSAGE>): void {
    const chat = attached.engine.chat;
    if (this.#capacity === 0 || chat === null) return;
    const id = key(chat.id, attached.engine.userId);
    this.#idle.delete(id);
    this.#idle.set(id, { attached, chat });
    for (const oldest of this.#idle.keys()) {
      if (this.#idle.size <= this.#capacity) break;
      this.#idle.delete(oldest);
    }
  }

  /** Drops the chat's idle engine (for every user), if any. */
  forget(chatId: string): void {
    for (const [id, entry] of this.#idle) {
      if (entry.attached.engine.chatId === chatId) this.#idle.delete(id);
    }
  }
}

/** Ids are identifiers (no NUL), so NUL separates them unambiguously. */
function key(chatId: string, userId: string): string {
  return `${chatId}\u0000${userId}`;
}
