import type { MessageSchemas } from '@ctxgraph/codecs';
import {
  type ChatRecord,
  type ContextStore,
  type HeadState,
  type JsonObject,
  OwnershipError,
  type Tokenizer,
  ValidationError,
} from '@ctxgraph/fragments-core';
import type { ModelPrices } from '../model-prices';
import { BranchView, type ChainRead } from './branch-view';
import { MessageValidator } from './message-validator';
import { PendingLane } from './pending-lane';
import { readUpgradingStore } from './read-upgrading-store';

/** Changes for {@link ContextEngine.updateChat}. */
export interface ChatUpdate {
  /** A new title (null clears it). */
  title?: string | null;
  /** Keys to merge into the chat's metadata. */
  metadata?: JsonObject;
}

/** The engine's options an open chat is made from (checked, with their defaults). */
export interface SessionOptions {
  readonly store: ContextStore;
  readonly chatId: string;
  readonly userId: string;
  readonly metadata: JsonObject | undefined;
  readonly messageSchemas: MessageSchemas;
  readonly onInvalidMessage: 'throw' | 'skip';
  readonly maxSaveAttempts: number;
  readonly prices: ModelPrices | undefined;
  readonly tokenizer: Tokenizer;
  /** Whether budgets use the factors learned from reported usage (`calibration`). */
  readonly calibration: boolean;
}

/** The engine's settings every feature reads. */
export interface SessionSettings {
  /** How often a write retries when other writers move the head (`maxSaveAttempts`). */
  readonly maxAttempts: number;
  readonly onInvalidMessage: 'throw' | 'skip';
  /** What token counts are in (budgets, compaction records, reports). */
  readonly tokenizer: Tokenizer;
  /** The engine's prices, over the built-in table. */
  readonly prices: ModelPrices | undefined;
  /** Whether budgets use the factors learned from reported usage (`calibration`). */
  readonly calibration: boolean;
}

/**
 * What an open chat is: the store (every node read with the engine's record beside its message),
 * the chat and user ids, the call-order queue, the view of the active branch, the pending lane
 * and the message validator. The engine's features take the session; the
 * engine itself only checks arguments and hands each call to them through `run`.
 */
export class ChatSession {
  readonly store: ContextStore;
  readonly chatId: string;
  readonly userId: string;
  readonly validator: MessageValidator;
  readonly view: BranchView;
  readonly pending: PendingLane = new PendingLane();
  readonly settings: SessionSettings;
  /**
   * The path `locate()` matched, read and validated, until the next `continueFrom()` takes it
   * (so that positioning at a node of it reads nothing again) or drops it.
   */
  located: ChainRead | undefined;
  /**
   * The engine's position, when `locate()` just matched a request against the engine's own path
   * without a read (by the caller's snapshot): a `continueFrom()` to it, next, reads nothing
   * either (the write the request makes there is compare-and-set on that head, and refused when
   * the node is gone). Taken or dropped by the next `continueFrom()`.
   */
  ownPosition: string | undefined;
  readonly #metadata: JsonObject | undefined;
  #chat: ChatRecord | null = null;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: SessionOptions) {
    // Records that earlier versions kept inside the message are read as beside it.
    this.store = readUpgradingStore(options.store);
    this.chatId = options.chatId;
    this.userId = options.userId;
    this.#metadata = options.metadata;
    this.settings = {
      maxAttempts: options.maxSaveAttempts,
      onInvalidMessage: options.onInvalidMessage,
      tokenizer: options.tokenizer,
      prices: options.prices,
      calibration: options.calibration,
    };
    this.validator = new MessageValidator(options.messageSchemas);
    this.view = new BranchView(this.store, options.chatId, this.validator);
  }

  /**
   * The chat as last read or written (its `revision` and `rewrittenAt` follow every write and read
   * of the view), or null before the session opened it.
   */
  get chat(): ChatRecord | null {
    const chat = this.#chat;
    const view = this.view;
    if (
      chat !== null &&
      (chat.revision !== view.revision || chat.rewrittenAt !== view.rewrittenAt)
    ) {
      this.#chat = { ...chat, revision: view.revision, rewrittenAt: view.rewrittenAt };
    }
    return this.#chat;
  }

  /** The chat as the store just returned it (`updateChat`, `getGraph`). */
  set chat(chat: ChatRecord) {
    this.#chat = chat;
  }

  /**
   * Runs `task` after every operation called before it, whatever they did, one at a time. The
   * task gets the pending lane's ticket taken now: it sees exactly the messages set before it was
   * called.
   */
  run<T>(task: (ticket: number) => Promise<T>): Promise<T> {
    const ticket = this.pending.ticket;
    const call = (): Promise<T> => task(ticket);
    const run = this.#queue.then(call, call);
    this.#queue = run.then(ignore, ignore);
    return run;
  }

  /**
   * Opens (or creates) the chat once; the store refuses another owner before anything else. When
   * it opened the chat just now, returns the head state `openChat` read (the active branch's head,
   * the chat's revision and `rewrittenAt`, read together), which this operation may use instead of
   * reading the head again; otherwise undefined.
   */
  async open(): Promise<HeadState | undefined> {
    if (this.#chat !== null) return undefined;
    const opened = await this.store.openChat({
      chatId: this.chatId,
      userId: this.userId,
      ...(this.#metadata === undefined ? {} : { metadata: this.#metadata }),
    });
    this.#chat = opened.chat;
    this.view.open(opened.branch, opened.chat);
    return {
      headMessageId: opened.branch.headMessageId,
      revision: opened.chat.revision,
      rewrittenAt: opened.chat.rewrittenAt,
    };
  }

  /** `updateChat()`: sets the title and merges metadata; returns the chat as stored. */
  async update(update: ChatUpdate): Promise<ChatRecord> {
    if (typeof update !== 'object' || update === null) {
      throw new ValidationError(
        'updateChat(update): update must be an object with title and/or metadata.',
      );
    }
    await this.open();
    const chat = await this.store.updateChat({
      chatId: this.chatId,
      ...(update.title === undefined ? {} : { title: update.title }),
      ...(update.metadata === undefined ? {} : { metadata: update.metadata }),
    });
    this.#chat = chat;
    return chat;
  }

  /**
   * `useSnapshot(chat)`: checks the record now (this chat, this user's, the chat the engine
   * opened), then hands it to the view in call order (operations called before still read).
   */
  useSnapshot(chat: ChatRecord | null): void {
    if (chat !== null) this.#checkSnapshot(chat);
    const view = this.view;
    void this.run(async () => view.useSnapshot(chat ?? undefined));
  }

  #checkSnapshot(chat: ChatRecord): void {
    const method = 'useSnapshot(chat)';
    const record = chat as Partial<ChatRecord> | null;
    if (typeof record !== 'object' || record === null || record.id !== this.chatId) {
      throw new ValidationError(
        `${method}: chat must be this engine's chat record ('${this.chatId}'), as store.getChat() returns it.`,
        { issues: [{ path: 'chat.id', message: `expected '${this.chatId}'` }] },
      );
    }
    if (record.userId !== this.userId) throw new OwnershipError(this.chatId, this.userId);
    for (const key of ['revision', 'rewrittenAt', 'createdAt'] as const) {
      const value = record[key];
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
        throw new ValidationError(`${method}: chat.${key} must be a non-negative integer.`, {
          issues: [{ path: `chat.${key}`, message: 'expected a non-negative integer' }],
        });
      }
    }
    const opened = this.#chat;
    if (opened !== null && opened.createdAt !== record.createdAt) {
      throw new ValidationError(
        `${method}: chat '${this.chatId}' was created at ${record.createdAt}, but the engine opened the chat of that id created at ${opened.createdAt}: it was deleted and made again since. Open a new engine for it.`,
        { issues: [{ path: 'chat.createdAt', message: `expected ${opened.createdAt}` }] },
      );
    }
  }

  /** True once the chat is open. */
  get isOpen(): boolean {
    return this.#chat !== null;
  }
}

/** A settled queue link: the next operation runs whatever the last one did. */
function ignore(): undefined {
  return undefined;
}
