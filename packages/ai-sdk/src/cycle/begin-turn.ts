import type { BudgetOptions } from '@ctxgraph/engine';
import {
  assertIdentifier,
  ChatNotFoundError,
  type ContextStore,
  type LiveReplyRecord,
  MessageNotFoundError,
  OwnershipError,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { ChatNotFoundForUserError, ChatRequestError } from '../errors';
import { endExpiredReplies, type LiveCycle } from '../live/live-replies';
import {
  type ChatMessageSchemas,
  type ChatRequest,
  readChatRequest,
  validateChatMessages,
} from '../request/read-chat-request';
import type { AttachedChat, ModelInput, PlacedRequest, ReplyStart } from './attach';
import type { ChatEngines } from './chat-engines';
import { settleClientMessages } from './client-copies';
import { ContinuationRefusedError } from './continuation-refused-error';
import type { BeginTurnOptions } from './cycle-options';

/** A request read, placed on the graph with the client's new messages saved, before the model call. */
export interface BegunTurn<UI_MESSAGE extends UIMessage = UIMessage> {
  readonly request: ChatRequest<UI_MESSAGE>;
  /** The request's engine, positioned where the reply goes. */
  readonly attached: AttachedChat<UI_MESSAGE>;
  readonly placed: PlacedRequest<UI_MESSAGE>;
  readonly input: ModelInput;
  /** The budget the input was resolved with (the turn's, else the cycle's). */
  readonly budget: BudgetOptions | undefined;
  /** The owner of the reply's live record (live replies on), else undefined. */
  readonly owner: string | undefined;
  /** The user the turn acts for. */
  readonly userId: string;
}

/** What {@link beginTurn} needs of the cycle. */
export interface TurnBeginning<UI_MESSAGE extends UIMessage = UIMessage> {
  readonly store: ContextStore;
  readonly engines: ChatEngines<UI_MESSAGE>;
  readonly schemas: ChatMessageSchemas<UI_MESSAGE>;
  readonly budget: BudgetOptions | undefined;
  readonly generateId: () => string;
  /** The store's live replies (when it has them), and whether the cycle streams into them. */
  readonly live: { readonly cycle: LiveCycle; readonly on: boolean } | undefined;
}

/**
 * `cycle.begin()` up to the model call: reads the body (a {@link ChatRequestError} before anything
 * is written), reads the client's copies of replies cut off mid-stream as the cycle stores them
 * (settled), validates what the graph does not hold yet, places the request on the chat's engine
 * (saving the client's new messages) and resolves the model input.
 */
export async function beginTurn<UI_MESSAGE extends UIMessage>(
  body: unknown,
  options: BeginTurnOptions,
  cycle: TurnBeginning<UI_MESSAGE>,
): Promise<BegunTurn<UI_MESSAGE>> {
  const { schemas } = cycle;
  const sent = await readChatRequest<UI_MESSAGE>(body, schemas, 'shape');
  const shaped = { ...sent, messages: settleClientMessages(sent.messages) };
  const { live } = cycle;
  // The chat and its live replies, read at the same time: the turn's reads before its write cost
  // one round trip of waiting. The live replies of a chat that turns out not to be the user's
  // (or not to exist) are never looked at.
  const [owned, liveState] = await Promise.all([
    cycle.engines.owned(shaped.chatId, options.userId),
    live === undefined ? undefined : liveStateOf(live.cycle, shaped.chatId),
  ]);
  // A chat that exists has its messages validated on write: only the messages it does not hold
  // yet are validated (after locating them). A new chat is validated whole, up front, so a bad
  // body never creates it.
  if (owned === null) await refuseOnNewChat(cycle.store, shaped, options.after);
  const fresh = shaped.lastOnly || owned === null;
  const request = fresh
    ? { ...shaped, messages: await validateChatMessages(shaped, 0, schemas) }
    : shaped;
  const validateFrom = (from: number): Promise<UI_MESSAGE[]> =>
    fresh
      ? Promise.resolve(request.messages.slice(from))
      : validateChatMessages(request, from, schemas);
  if (request.trigger === 'regenerate-message' && request.messages.at(-1)?.role !== 'user') {
    throw new ChatRequestError(
      'Chat request refused: a regenerate-message body ends with the user message whose reply is regenerated.',
      { issues: [{ path: 'messages', message: 'expected a user message last' }] },
    );
  }
  // Replies whose writer died are ended (saved as interrupted) before the chat takes a turn, so
  // the turn continues after them.
  if (live !== undefined && owned !== null && liveState !== undefined && liveState.length > 0)
    await endExpiredReplies(live.cycle, request.chatId, options.userId, liveState);
  const owner = cycle.generateId();
  const start: ReplyStart = {
    replyId: cycle.generateId(),
    owner,
    leaseMs: live?.cycle.settings.leaseMs ?? 10_000,
    keep: live?.on === true,
  };
  const placeOn = async (attached: AttachedChat<UI_MESSAGE>): Promise<BegunTurn<UI_MESSAGE>> => {
    // The context is the request's own: a warm engine's is cleared before the app sets it.
    attached.engine.replaceContext([]);
    await options.context?.(attached.engine);
    const placed = await attached.place(request, validateFrom, options.after, start);
    const budget = options.budget ?? cycle.budget;
    const input = await attached.modelInput(budget);
    return {
      request,
      attached,
      placed,
      input,
      budget,
      owner: start.keep ? owner : undefined,
      userId: options.userId,
    };
  };
  try {
    const attached = cycle.engines.take(request.chatId, options.userId, owned);
    const warm = attached.engine.chat !== null;
    try {
      return await placeOn(attached);
    } catch (error) {
      // A warm engine places the request on the path it knows, by the chat's revision; deleting a
      // branch removes the nodes only it reached without moving the revision, so the node it
      // stands on may be gone. Its write was refused (nothing written): a new engine places the
      // request again, reading the graph.
      if (!warm || !MessageNotFoundError.isInstance(error)) throw error;
      return await placeOn(cycle.engines.take(request.chatId, options.userId, null));
    }
  } catch (error) {
    if (OwnershipError.isInstance(error)) {
      throw new ChatNotFoundForUserError(`No chat '${request.chatId}' for this user.`, {
        cause: error,
      });
    }
    throw error;
  }
}

/** The chat's live replies; undefined for a chat that does not exist (yet). */
async function liveStateOf(
  live: LiveCycle,
  chatId: string,
): Promise<readonly LiveReplyRecord[] | undefined> {
  try {
    return (await live.settings.store.getLiveState(chatId)).replies;
  } catch (error) {
    if (ChatNotFoundError.isInstance(error)) return undefined;
    throw error;
  }
}

/**
 * What a request cannot ask of a chat that does not exist, refused before anything is written
 * (opening the chat would create it): to continue a reply (there is none), or to continue after a
 * node (`after`: there is none). A chat of another user is left to the ownership check.
 */
async function refuseOnNewChat<UI_MESSAGE extends UIMessage>(
  store: ContextStore,
  request: ChatRequest<UI_MESSAGE>,
  after: string | null | undefined,
): Promise<void> {
  const last = request.messages.at(-1) as UI_MESSAGE;
  const continues = request.trigger === 'submit-message' && last.role === 'assistant';
  const placedAfter = request.lastOnly && typeof after === 'string';
  if (!continues && !placedAfter) return;
  if (placedAfter) assertIdentifier('begin(body, options)', 'options.after', after);
  if ((await store.getChat(request.chatId)) !== null) return;
  if (continues) {
    throw new ContinuationRefusedError(
      `Chat request refused: chat '${request.chatId}' does not exist yet, so it holds no reply '${last.id}' to continue.`,
      {
        issues: [
          {
            path: request.lastOnly ? 'message' : `messages[${request.messages.length - 1}]`,
            message: 'no such stored reply',
          },
        ],
      },
    );
  }
  throw new MessageNotFoundError(request.chatId, after as string);
}
