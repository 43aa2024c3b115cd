import type { BudgetOptions, ContextEngine, ReplyOutcome } from '@ctxgraph/engine';
import { type ContextStore, ValidationError } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import type { LiveOption } from '../live/live-settings';
import type { ChatMessageSchemas } from '../request/read-chat-request';
import type { ResumableStreams } from '../stream/resumable-streams';
import type { CycleEngineOptions } from './attach';
import type { CompactionEvent } from './background-compaction';

/** Options of {@link createChatCycle}. */
export interface ChatCycleOptions<UI_MESSAGE extends UIMessage = UIMessage> {
  /** Where the chats live. */
  store: ContextStore;
  /**
   * The engine settings each request's engine opens with: `renderer` (required), tokenizer,
   * prices, `messageSchemas`, …
   */
  engine: CycleEngineOptions;
  /**
   * The AI SDK schemas the client's messages are validated with (`metadataSchema`,
   * `dataSchemas`, `tools`: the same `tools` you give `streamText`). Without them, metadata, data
   * parts and tool payloads are only checked for shape.
   */
  schemas?: ChatMessageSchemas<UI_MESSAGE>;
  /** Fit the model input to a token budget (`resolve({ budget })`, cache plan included). */
  budget?: BudgetOptions;
  /** Makes the ids of replies (server-side ids). @default the AI SDK's `generateId` */
  generateId?: () => string;
  /**
   * Keep each chat's active reply stream in this process so a reconnecting client can resume it
   * (for a store without live replies, or with `live: false`).
   */
  streams?: ResumableStreams;
  /**
   * Live replies, on when the store declares `capabilities.liveReplies` (all bundled stores do):
   * each reply's chunks are kept in the store while it streams (appended in batches every
   * `flushMs`; its writer holds it for `leaseMs` from each write), so any process on the store
   * can resume it (`resume`), stop it (`stop`) and follow the chat (`events`), and a reply whose
   * process died is saved as `interrupted` by the next process that looks once its lease ran
   * out. `false` turns them off. A process that dies loses at most the chunks of its last
   * `flushMs` (plus one write): 200 ms keeps every chunk a client had 250 ms before, in 3 writes
   * for a reply that streams 400 ms; a smaller `flushMs` shows another tab the text in smaller
   * steps, at one store write each.
   * @default { leaseMs: 10_000, flushMs: 200 }
   */
  live?: LiveOption;
  /**
   * Stop the model call when the client disconnects (its `stop()`, a closed tab, a reload: the
   * request's signal aborts or the response's body is cancelled). The reply so far is saved,
   * marked `aborted`, with every part settled. Off by default with live replies: a disconnect
   * then does not stop the reply, which runs to its end, is saved whole and can be resumed
   * meanwhile from any process; stop it with `cycle.stop()`.
   * @default false with live replies on, else true
   */
  stopOnDisconnect?: boolean;
  /**
   * How many chats keep a warm engine between requests (least recently used dropped first; 0: a
   * fresh engine for every request). A warm engine has its chat's path cached and validated, so
   * a turn reads only what changed since (whichever process wrote it), not the whole history; it
   * shows and sends exactly what a fresh engine would. A request never shares its engine: while
   * one is under way, another request on the chat gets an engine of its own.
   * @default 100
   */
  warmEngines?: number;
  /** Called when a streamed reply could not be saved (the client gets an `error` chunk too). */
  onSaveError?: (error: unknown) => void;
  /**
   * Called once a reply is saved (not for a reply dropped because it had no content): which one,
   * how it ended, and how long the save took in milliseconds.
   */
  onReplySaved?: (event: ReplySavedEvent) => void;
  /**
   * Told what each background compaction did (`engine.autoCompact` with `policy: 'cost'`: the
   * compaction a turn's resolve deferred runs after its reply is saved): `'compacted'`,
   * `'superseded'`, or `'failed'` with the error (nothing written). Failures come here, never
   * lost: each turn's `compaction` promise has the same outcome.
   */
  onCompaction?: (event: CompactionEvent) => void;
  /**
   * Keeps the runtime alive for work after the response (Cloudflare Workers and Vercel: the
   * request's `ctx.waitUntil`): each background compaction's promise is handed to it. Per
   * request, pass it to `begin()` instead.
   */
  waitUntil?: (promise: Promise<unknown>) => void;
}

/** What {@link ChatCycleOptions.onReplySaved} is told. */
export interface ReplySavedEvent {
  readonly chatId: string;
  readonly replyId: string;
  readonly outcome: ReplyOutcome;
  /** Milliseconds the save took. */
  readonly saveMs: number;
}

/** Options of {@link ChatCycle.begin}. */
export interface BeginTurnOptions {
  /** The signed-in user; a chat of another user is refused as unknown. */
  userId: string;
  /**
   * The request's signal (`request.signal`): it aborts when the client disconnects, which stops
   * the model call only when the cycle has `stopOnDisconnect` (the default without live replies).
   * With live replies a disconnect is not a stop: the reply runs to its end, is saved whole and
   * can be resumed meanwhile; stop it with `cycle.stop()`.
   */
  signal?: AbortSignal;
  /**
   * This request's `waitUntil` (Workers: `ctx.waitUntil.bind(ctx)`), in place of the cycle's: the
   * turn's background compaction is handed to it.
   */
  waitUntil?: (promise: Promise<unknown>) => void;
  /** Sets the turn's system context on the engine (`engine.set(role(…))`, `loadContext()`). */
  context?: (engine: ContextEngine) => unknown;
  /**
   * This turn's token budget, in place of the cycle's `budget` (an app whose user picks the
   * budget per request). The reply is saved with the budget's cache prediction, so `usage()` and
   * `inspect()` report it predicted and, from the reply's usage, confirmed.
   * @default the cycle's `budget`
   */
  budget?: BudgetOptions;
  /**
   * The node a body with only the last message (`{ message }`) continues from when the chat does
   * not hold that message yet (a new question), in place of the chat's most recently written
   * message: for a client that shows one branch of the graph and knows its head. Null: a new
   * root. A node that is not in the chat is refused before anything is written. For a message
   * the chat holds in several versions (a regenerate on an older one), the version that follows
   * this node is the one the body means. Ignored for a body with all the messages (they say
   * where they continue).
   * @default the most recently written message
   */
  after?: string | null;
}

/** Options of the cycle's reads. */
export interface ReadOptions {
  /** The signed-in user; a chat of another user reads as unknown. */
  userId: string;
}

/** Options of `cycle.resume` and `cycle.events`. */
export interface FollowOptions extends ReadOptions {
  /** Ends the stream (the request's signal). */
  signal?: AbortSignal;
}

/**
 * The cycle's options checked, with their defaults: a `ValidationError` for a cycle without a
 * renderer or with a `warmEngines` that is not a whole number of chats.
 */
export function checkCycleOptions(options: ChatCycleOptions<UIMessage>): { warmEngines: number } {
  if (options.engine?.renderer === undefined) {
    throw new ValidationError(
      'createChatCycle(options): engine.renderer is required (the system prompt is rendered on every turn), for example { engine: { renderer: new XmlRenderer() } } from @ctxgraph/renderer-xml.',
      { issues: [{ path: 'engine.renderer', message: 'expected a ContextRenderer' }] },
    );
  }
  const warmEngines = options.warmEngines ?? 100;
  if (!Number.isInteger(warmEngines) || warmEngines < 0) {
    throw new ValidationError(
      `createChatCycle(options): warmEngines must be a whole number of chats (0 for none), received ${String(warmEngines)}.`,
      { issues: [{ path: 'warmEngines', message: 'expected an integer >= 0' }] },
    );
  }
  return { warmEngines };
}
