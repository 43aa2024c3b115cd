import { storableMessageIssues } from '@ctxgraph/codecs';
import { assertIdentifier, describeValue, ValidationError } from '@ctxgraph/fragments-core';
import { safeValidateUIMessages, type ToolSet, type UIMessage } from 'ai';
import { ChatRequestError } from '../errors';

/** What the AI SDK's chat transport says a request is for. */
export type ChatTrigger = 'submit-message' | 'regenerate-message';

/**
 * The schemas the AI SDK validates the client's messages against (its `validateUIMessages`
 * options): `metadataSchema`, `dataSchemas` and `tools`. Pass the same `tools` object you give
 * `streamText`.
 */
export type ChatMessageSchemas<UI_MESSAGE extends UIMessage = UIMessage> = Omit<
  Parameters<typeof safeValidateUIMessages<UI_MESSAGE>>[0],
  'messages' | 'tools'
> & {
  /** The tools (`streamText`'s `tools`): tool parts are validated against their schemas. */
  tools?: ToolSet;
};

/** A chat request as the cycle read it: validated, nothing written yet. */
export interface ChatRequest<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The chat's id (`body.id`). */
  readonly chatId: string;
  /** `submit-message` (a new turn, an edit, or a client-side tool result) or `regenerate-message`. */
  readonly trigger: ChatTrigger;
  /**
   * The message the transport names: for an edit, the edited user message; for a regenerate, the
   * reply being replaced; for a tool result or approval, the assistant message it completes.
   */
  readonly messageId: string | undefined;
  /**
   * The client's messages (one for a last-message-only body): validated by the AI SDK with
   * `validate: 'all'`, only checked for shape (id, role, parts) with `validate: 'shape'`.
   */
  readonly messages: readonly UI_MESSAGE[];
  /** True when the body carried only the last message (`{ id, message }`). */
  readonly lastOnly: boolean;
  /** The body's other fields (anything the app's transport adds with `body`), untouched. */
  readonly extra: Readonly<Record<string, unknown>>;
}

const triggers: readonly ChatTrigger[] = ['submit-message', 'regenerate-message'];

function refuse(message: string, path: string, problem: string): never {
  throw new ChatRequestError(`Chat request refused: ${message}`, {
    issues: [{ path, message: problem }],
  });
}

/** Refuses an id the store could not keep (too long, NUL, a lone surrogate), naming `path`. */
function assertStorableId(path: string, value: unknown, what: string): asserts value is string {
  try {
    assertIdentifier('chat request', path, value);
  } catch (error) {
    if (ValidationError.isInstance(error)) refuse(error.message, path, what);
    throw error;
  }
}

/**
 * Reads and validates the body the AI SDK's `DefaultChatTransport` posts (`{ id, messages,
 * trigger, messageId }`), or the last-message-only form (`{ id, message, trigger, messageId }`).
 * Throws a {@link ChatRequestError} (status 400) for anything it refuses; it writes nothing. It
 * applies the store's own rules to every message (`storableMessageIssues` of `@ctxgraph/codecs`:
 * ids, NUL and lone surrogates in any string or key, nesting deeper than `MAX_JSON_DEPTH`), so a
 * body the store could not keep is refused before anything of it is written.
 * `validate: 'shape'` checks the body and each message's id, role and parts only, leaving the AI
 * SDK's validation to {@link validateChatMessages} (the cycle validates only the messages the
 * graph does not already hold, so a long conversation is not re-validated on every turn).
 *
 * @example
 * ```ts
 * const request = await readChatRequest(await readChatBody(c.req.raw), { tools });
 * ```
 */
export async function readChatRequest<UI_MESSAGE extends UIMessage = UIMessage>(
  body: unknown,
  schemas: ChatMessageSchemas<UI_MESSAGE> = {} as ChatMessageSchemas<UI_MESSAGE>,
  validate: 'all' | 'shape' = 'all',
): Promise<ChatRequest<UI_MESSAGE>> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    refuse(
      `the body must be a JSON object such as { id, messages, trigger }, received ${describeValue(body)}.`,
      '',
      'expected an object',
    );
  }
  const record = body as Record<string, unknown>;
  const { id, messages, message, trigger, messageId, ...extra } = record;
  if (typeof id !== 'string' || id === '') {
    refuse(
      `body.id must be the chat's id (a non-empty string), received ${id === '' ? 'an empty string' : describeValue(id)}.`,
      'id',
      'expected a non-empty string',
    );
  }
  assertStorableId('id', id, 'not a valid identifier');
  const resolvedTrigger = trigger ?? 'submit-message';
  if (!triggers.includes(resolvedTrigger as ChatTrigger)) {
    refuse(
      `body.trigger must be 'submit-message' or 'regenerate-message', received ${
        typeof trigger === 'string' ? `'${trigger.slice(0, 40)}'` : describeValue(trigger)
      }.`,
      'trigger',
      'expected submit-message or regenerate-message',
    );
  }
  if (
    messageId !== undefined &&
    messageId !== null &&
    (typeof messageId !== 'string' || messageId === '')
  ) {
    refuse(
      `body.messageId must be a message id (a non-empty string) when given, received ${describeValue(messageId)}.`,
      'messageId',
      'expected a non-empty string',
    );
  }
  if (typeof messageId === 'string')
    assertStorableId('messageId', messageId, 'not a valid message id');
  let list: unknown[];
  let lastOnly: boolean;
  if (Array.isArray(messages) && messages.length > 0) {
    list = messages;
    lastOnly = false;
  } else if (messages === undefined && typeof message === 'object' && message !== null) {
    list = [message];
    lastOnly = true;
  } else {
    refuse(
      `the body needs a non-empty messages array (all the client's messages) or a message (only the last one); received messages: ${
        Array.isArray(messages) ? 'an empty array' : describeValue(messages)
      }, message: ${describeValue(message)}.`,
      'messages',
      'expected a non-empty array, or a message',
    );
  }
  const seen = new Set<string>();
  list.forEach((candidate, index) => {
    const at = lastOnly ? 'message' : `messages[${index}]`;
    if (typeof candidate !== 'object' || candidate === null || Array.isArray(candidate)) {
      refuse(
        `${at} must be a UI message object, received ${describeValue(candidate)}.`,
        at,
        'expected an object',
      );
    }
    const { id: candidateId, role, parts } = candidate as Record<string, unknown>;
    assertStorableId(`${at}.id`, candidateId, 'not a valid message id');
    if (seen.has(candidateId)) {
      refuse(
        `${at}.id repeats the id '${candidateId}': a conversation path holds each id once.`,
        `${at}.id`,
        'duplicate id',
      );
    }
    seen.add(candidateId);
    if (role === 'system') {
      refuse(
        `${at} is a system message: the system prompt comes from the server's context, never from the client.`,
        `${at}.role`,
        'system messages are not accepted from a client',
      );
    }
    if (role !== 'user' && role !== 'assistant') {
      refuse(
        `${at}.role must be 'user' or 'assistant', received ${describeValue(role)}.`,
        `${at}.role`,
        'expected user or assistant',
      );
    }
    if (!Array.isArray(parts)) {
      refuse(
        `${at}.parts must be an array of message parts, received ${describeValue(parts)}.`,
        `${at}.parts`,
        'expected an array',
      );
    }
    // The store's own rules, up front: a message the store would refuse on save (NUL or a lone
    // surrogate in a string or a key, JSON nested deeper than MAX_JSON_DEPTH, a part without a
    // type) is refused here, before anything of the request is written.
    const unstorable = storableMessageIssues(candidate, at);
    if (unstorable.length > 0) {
      const shown = unstorable
        .slice(0, 3)
        .map((issue) => `${shortPath(issue.path)}: ${issue.message}`)
        .join('; ');
      const more = unstorable.length > 3 ? ` (and ${unstorable.length - 3} more)` : '';
      throw new ChatRequestError(`Chat request refused: ${at} cannot be stored: ${shown}${more}.`, {
        issues: unstorable,
      });
    }
  });
  const shaped = list as UI_MESSAGE[];
  const last = shaped.at(-1) as UI_MESSAGE;
  if (
    resolvedTrigger === 'submit-message' &&
    last.role === 'assistant' &&
    (messageId ?? undefined) !== last.id
  ) {
    refuse(
      `a submit-message that ends with an assistant message continues that reply (a client-side tool result or an approval), so body.messageId must name it ('${last.id}').`,
      'messageId',
      'expected the id of the last assistant message',
    );
  }
  const request: ChatRequest<UI_MESSAGE> = {
    chatId: id,
    trigger: resolvedTrigger as ChatTrigger,
    messageId: typeof messageId === 'string' ? messageId : undefined,
    messages: shaped,
    lastOnly,
    extra,
  };
  return validate === 'all'
    ? { ...request, messages: await validateChatMessages(request, 0, schemas) }
    : request;
}

/** A path for an error message: a deep one keeps its start and its end (the issue has it whole). */
function shortPath(path: string): string {
  return path.length <= 120 ? path : `${path.slice(0, 60)}…${path.slice(-40)}`;
}

/**
 * The request's messages from `from` on, validated by the AI SDK's `validateUIMessages` (with the
 * app's schemas); a {@link ChatRequestError} names the first one refused.
 */
export async function validateChatMessages<UI_MESSAGE extends UIMessage>(
  request: ChatRequest<UI_MESSAGE>,
  from: number,
  schemas: ChatMessageSchemas<UI_MESSAGE>,
): Promise<UI_MESSAGE[]> {
  const list = request.messages.slice(from);
  if (list.length === 0) return [];
  const validated = await safeValidateUIMessages<UI_MESSAGE>({
    ...(schemas as Omit<Parameters<typeof safeValidateUIMessages<UI_MESSAGE>>[0], 'messages'>),
    messages: list,
  });
  if (!validated.success) {
    const path = request.lastOnly
      ? 'message'
      : from === 0
        ? 'messages'
        : `messages (from index ${from})`;
    refuse(
      `${path} ${list.length === 1 ? 'is not a valid AI SDK UI message' : 'is not a valid list of AI SDK UI messages'}: ${validated.error.message}`,
      request.lastOnly ? 'message' : `messages[${from}]`,
      validated.error.message,
    );
  }
  return validated.data;
}
