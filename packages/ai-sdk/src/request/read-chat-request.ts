import { assertIdentifier, describeValue, ValidationError } from '@ctxgraph/fragments-core';
import { safeValidateUIMessages, type UIMessage } from 'ai';
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
  'messages'
>;

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
  /** The client's messages, validated by the AI SDK (one message for a last-message-only body). */
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

/**
 * Reads and validates the body the AI SDK's `DefaultChatTransport` posts (`{ id, messages,
 * trigger, messageId }`), or the last-message-only form (`{ id, message, trigger, messageId }`).
 * Throws a {@link ChatRequestError} (status 400) for anything it refuses; it writes nothing.
 *
 * @example
 * ```ts
 * const request = await readChatRequest(await c.req.json(), { tools });
 * ```
 */
export async function readChatRequest<UI_MESSAGE extends UIMessage = UIMessage>(
  body: unknown,
  schemas: ChatMessageSchemas<UI_MESSAGE> = {} as ChatMessageSchemas<UI_MESSAGE>,
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
  try {
    assertIdentifier('chat request', 'id', id);
  } catch (error) {
    if (ValidationError.isInstance(error)) refuse(error.message, 'id', 'not a valid identifier');
    throw error;
  }
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
  let list: unknown[];
  let lastOnly: boolean;
  let path: string;
  if (Array.isArray(messages) && messages.length > 0) {
    list = messages;
    lastOnly = false;
    path = 'messages';
  } else if (messages === undefined && typeof message === 'object' && message !== null) {
    list = [message];
    lastOnly = true;
    path = 'message';
  } else {
    refuse(
      `the body needs a non-empty messages array (all the client's messages) or a message (only the last one); received messages: ${
        Array.isArray(messages) ? 'an empty array' : describeValue(messages)
      }, message: ${describeValue(message)}.`,
      'messages',
      'expected a non-empty array, or a message',
    );
  }
  const validated = await safeValidateUIMessages<UI_MESSAGE>({ ...schemas, messages: list });
  if (!validated.success) {
    refuse(
      `${path} is not a valid list of AI SDK UI messages: ${validated.error.message}`,
      path,
      validated.error.message,
    );
  }
  const seen = new Set<string>();
  validated.data.forEach((candidate, index) => {
    const where = lastOnly ? 'message.id' : `messages[${index}].id`;
    try {
      assertIdentifier('chat request', where, candidate.id);
    } catch (error) {
      if (ValidationError.isInstance(error)) refuse(error.message, where, 'not a valid message id');
      throw error;
    }
    if (seen.has(candidate.id)) {
      refuse(
        `${where} repeats the id '${candidate.id}': a conversation path holds each id once.`,
        where,
        'duplicate id',
      );
    }
    seen.add(candidate.id);
    if (candidate.role === 'system') {
      refuse(
        `${where.replace('.id', '')} is a system message: the system prompt comes from the server's context, never from the client.`,
        where.replace('.id', '.role'),
        'system messages are not accepted from a client',
      );
    }
  });
  const last = validated.data.at(-1) as UI_MESSAGE;
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
  return {
    chatId: id,
    trigger: resolvedTrigger as ChatTrigger,
    messageId: typeof messageId === 'string' ? messageId : undefined,
    messages: validated.data,
    lastOnly,
    extra,
  };
}
