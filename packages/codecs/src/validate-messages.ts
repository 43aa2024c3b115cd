import {
  ValidationError,
  type ValidationErrorOptions,
  type ValidationIssue,
} from '@ctxgraph/fragments-core';
import { safeValidateUIMessages, type UIMessage } from 'ai';

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
  return Promise.all(
    messages.map(async (candidate, index): Promise<MessageCheck> => {
      const result = await safeValidateUIMessages({ ...schemas, messages: [candidate] });
      if (result.success) return { index, success: true, message: result.data[0] as UIMessage };
      return { index, success: false, error: toMessageError(candidate, index, result.error) };
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
  // One call for the common, valid case; per-message checks only to explain a failure.
  const result = await safeValidateUIMessages({ ...schemas, messages });
  if (result.success) return result.data;
  const checks = await checkMessages(messages, schemas);
  const failed = checks.find((check) => !check.success);
  if (failed && !failed.success) throw failed.error;
  throw toMessageError(messages, 0, result.error);
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

interface ZodLikeIssue {
  readonly code?: string;
  readonly path?: readonly PropertyKey[];
  readonly message?: string;
  readonly errors?: readonly (readonly ZodLikeIssue[])[];
}

function toMessageError(candidate: unknown, index: number, error: Error): MessageValidationError {
  const messageId = readableId(candidate);
  const raw = (error.cause as { issues?: readonly ZodLikeIssue[] } | undefined)?.issues;
  // Metadata and data-part schema failures say which field they are about; their issue paths are
  // relative to that field.
  const field = (error as { context?: { field?: unknown } }).context?.field;
  const base = typeof field === 'string' ? parsePath(field.replace(/^messages\[\d+\]\.?/, '')) : [];
  const issues: ValidationIssue[] = [];
  if (Array.isArray(raw)) {
    for (const issue of raw) collectIssues(issue, base, candidate, index, issues);
  }
  if (issues.length === 0) issues.push({ path: `messages[${index}]`, message: error.message });
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

function collectIssues(
  issue: ZodLikeIssue,
  prefix: readonly PropertyKey[],
  candidate: unknown,
  index: number,
  out: ValidationIssue[],
): void {
  // Paths from a one-message validation start with the position in that list (always 0).
  const fullPath = [...prefix, ...(issue.path ?? [])];
  const relative = prefix.length === 0 && fullPath[0] === 0 ? fullPath.slice(1) : fullPath;

  if (issue.code === 'invalid_union' && Array.isArray(issue.errors)) {
    const value = valueAt(candidate, relative);
    const type =
      typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
    // The part union failed: explain it with the branch meant for this part's type, if any.
    const matching = issue.errors.find(
      (branch: readonly ZodLikeIssue[]) =>
        !branch.some(
          (inner: ZodLikeIssue) =>
            inner.code === 'invalid_value' && inner.path?.length === 1 && inner.path[0] === 'type',
        ),
    );
    if (typeof type === 'string' && matching) {
      for (const inner of matching) collectIssues(inner, relative, candidate, index, out);
      return;
    }
    out.push({
      path: formatPath(index, [...relative, 'type']),
      message: `unknown part type ${JSON.stringify(type)}`,
    });
    return;
  }
  out.push({ path: formatPath(index, relative), message: issue.message ?? 'invalid' });
}

function parsePath(text: string): PropertyKey[] {
  const keys: PropertyKey[] = [];
  for (const match of text.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    keys.push(match[2] === undefined ? (match[1] as string) : Number(match[2]));
  }
  return keys;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function formatPath(index: number, path: readonly PropertyKey[]): string {
  let text = `messages[${index}]`;
  for (const key of path) text += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  return text;
}

function readableId(candidate: unknown): string | undefined {
  if (typeof candidate !== 'object' || candidate === null) return undefined;
  const id = (candidate as { id?: unknown }).id;
  return typeof id === 'string' ? id : undefined;
}
