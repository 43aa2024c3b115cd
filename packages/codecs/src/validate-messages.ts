import { ValidationError, type ValidationErrorOptions } from '@ctxgraph/fragments-core';
import { safeValidateUIMessages, type UIMessage } from 'ai';
import { explainIssues } from './explain-issues';
import { plainParser } from './plain-messages';

/**
 * Schemas the AI SDK validates message content against. Without them, metadata, data parts and
 * tool inputs/outputs are only checked for shape. Passed straight to the AI SDK's
 * `validateUIMessages`.
 */
export type MessageSchemas = Omit<Parameters<typeof safeValidateUIMessages>[0], 'messages'>;

/** Options of {@link MessageValidationError}. */
export interface MessageValidationErrorOptions extends ValidationErrorOptions {
  /** Where the failing message sits in the list. */
  index: number;
  /** Its id, when it has a readable one. */
  messageId?: string;
}

/**
 * A message did not pass the AI SDK's `UIMessage` validation. The message says which message
 * (position and id) and which fields; `issues` has one entry per problem with its path
 * (`messages[2].parts[0].text`).
 */
export class MessageValidationError extends ValidationError {
  static override readonly errorName: string = 'MessageValidationError';
  /** Position of the failing message in the list that was validated. */
  readonly index: number;
  /** Id of the failing message, when it has one. */
  readonly messageId: string | undefined;

  constructor(message: string, options: MessageValidationErrorOptions) {
    super(message, options);
    this.index = options.index;
    this.messageId = options.messageId;
  }
}

/** The outcome for one message of {@link checkMessages}. */
export type MessageCheck =
  | { readonly index: number; readonly success: true; readonly message: UIMessage }
  | { readonly index: number; readonly success: false; readonly error: MessageValidationError };

/**
 * Validates each message on its own with the AI SDK, so one stored message that no longer
 * validates (a tool whose schema changed, say) can be reported or skipped without making the
 * whole conversation unreadable.
 *
 * @example
 * ```ts
 * const checks = await checkMessages(stored, { tools });
 * const readable = checks.flatMap((check) => (check.success ? [check.message] : []));
 * ```
 */
export async function checkMessages(
  messages: readonly unknown[],
  schemas: MessageSchemas = {},
): Promise<MessageCheck[]> {
  assertList('checkMessages', messages);
  const plain = plainParser(schemas);
  return Promise.all(
    messages.map(async (candidate, index): Promise<MessageCheck> => {
      const parsed = plain(candidate);
      if (parsed !== undefined) return { index, success: true, message: parsed };
      const result = await safeValidateUIMessages({ ...schemas, messages: [candidate] });
      if (result.success) return { index, success: true, message: result.data[0] as UIMessage };
      return {
        index,
        success: false,
        error: await toMessageError(candidate, index, result.error),
      };
    }),
  );
}

/**
 * Validates a list of messages with the AI SDK and returns them typed as `UIMessage[]`; throws a
 * {@link MessageValidationError} for the first message that fails, naming it and its fields. An
 * empty list is valid (a conversation may have no messages yet).
 */
export async function validateMessages(
  messages: readonly unknown[],
  schemas: MessageSchemas = {},
): Promise<UIMessage[]> {
  assertList('validateMessages', messages);
  if (messages.length === 0) return [];
  // Plain text messages are parsed by hand; the rest in one AI SDK call for the common, valid
  // case; per-message checks only to explain a failure.
  const plain = plainParser(schemas);
  const parsed = messages.map(plain);
  const rest = messages.filter((_, index) => parsed[index] === undefined);
  if (rest.length === 0) return parsed as UIMessage[];
  const result = await safeValidateUIMessages({ ...schemas, messages: rest });
  if (result.success) {
    let next = 0;
    return parsed.map((message) => message ?? (result.data[next++] as UIMessage));
  }
  const checks = await checkMessages(messages, schemas);
  const failed = checks.find((check) => !check.success);
  if (failed && !failed.success) throw failed.error;
  throw await toMessageError(messages, 0, result.error);
}

/** Validates one message; throws a {@link MessageValidationError} when it fails. */
export async function validateMessage(
  candidate: unknown,
  schemas: MessageSchemas = {},
): Promise<UIMessage> {
  const [validated] = await validateMessages([candidate], schemas);
  return validated as UIMessage;
}

function assertList(method: string, messages: unknown): asserts messages is readonly unknown[] {
  if (!Array.isArray(messages)) {
    throw new ValidationError(
      `${method}(messages): messages must be an array, received ${typeof messages}.`,
      {
        issues: [{ path: 'messages', message: 'expected an array' }],
      },
    );
  }
}

async function toMessageError(
  candidate: unknown,
  index: number,
  error: Error,
): Promise<MessageValidationError> {
  const messageId = readableId(candidate);
  const issues = await explainIssues(candidate, index, error);
  const who =
    messageId === undefined
      ? `messages[${index}]`
      : `messages[${index}] (id ${JSON.stringify(messageId)})`;
  const list = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  return new MessageValidationError(`Invalid UIMessage ${who}: ${list}.`, {
    issues,
    index,
    messageId,
    cause: error,
  });
}

function readableId(candidate: unknown): string | undefined {
  if (typeof candidate !== 'object' || candidate === null) return undefined;
  const id = (candidate as { id?: unknown }).id;
  return typeof id === 'string' ? id : undefined;
}
