import {
  type ContextFragment,
  type FragmentCodec,
  ValidationError,
  type ValidationIssue,
} from '@ctxgraph/fragments-core';
import { generateId, type UIMessage } from 'ai';

/** The roles a conversation message can have. */
export type MessageRole = UIMessage['role'];

/**
 * What a message codec's `decode()` yields: the message with its text already joined, for code
 * that wants to read a message rather than send it.
 */
export interface MaterializedMessage {
  /** The message id. */
  readonly id: string;
  /** Who said it. */
  readonly role: MessageRole;
  /** Every text part's text, joined with blank lines. */
  readonly text: string;
  /** The parts, as in the `UIMessage`. */
  readonly parts: UIMessage['parts'];
  /** The message metadata, if any. */
  readonly metadata?: unknown;
}

/**
 * A conversation message as a fragment: `type: 'message'`, `persist: true`, named after its role,
 * with the message id as its id and a codec whose `encode()` yields the AI SDK `UIMessage`.
 */
export interface MessageFragment extends ContextFragment<string> {
  id: string;
  name: MessageRole;
  type: 'message';
  persist: true;
  codec: FragmentCodec<UIMessage, MaterializedMessage>;
}

/** Options of {@link user} and {@link assistantText}. */
export interface TextMessageOptions {
  /** A fixed message id. @default a generated id */
  id?: string;
  /** Message metadata, stored with the message. */
  metadata?: unknown;
}

const roles: readonly string[] = ['system', 'user', 'assistant'];

/**
 * A user message.
 *
 * @example
 * ```ts
 * engine.set(user('Explain recursion', { id: 'q1' }));
 * engine.set(user({ id: 'q2', role: 'user', parts: [{ type: 'text', text: 'And iteration?' }] }));
 * ```
 */
export function user(
  content: string | UIMessage,
  options: TextMessageOptions = {},
): MessageFragment {
  return roleMessage('user', 'user(content, options)', content, options);
}

/**
 * An assistant message made of one text part.
 *
 * @example
 * ```ts
 * engine.set(assistantText('Recursion is a function calling itself.'));
 * ```
 */
export function assistantText(text: string, options: TextMessageOptions = {}): MessageFragment {
  if (typeof text !== 'string') {
    throw new ValidationError(
      `assistantText(text, options): text must be a string, received ${describe(text)}.`,
      {
        issues: [{ path: 'text', message: `expected string, received ${describe(text)}` }],
      },
    );
  }
  return roleMessage('assistant', 'assistantText(text, options)', text, options);
}

/**
 * An assistant message: a whole `UIMessage` (from `streamText(...).toUIMessageStream`, `useChat`,
 * …) or, for convenience, a plain text reply such as `response.text`.
 *
 * @example
 * ```ts
 * const response = await generateText({ model, system, messages });
 * engine.set(assistant(response.text));
 * ```
 */
export function assistant(
  content: UIMessage | string,
  options: TextMessageOptions = {},
): MessageFragment {
  return roleMessage('assistant', 'assistant(content, options)', content, options);
}

/**
 * Any `UIMessage`, whatever its role (system, user or assistant), as a message fragment.
 *
 * @example
 * ```ts
 * for (const uiMessage of savedMessages) engine.set(message(uiMessage));
 * ```
 */
export function message(uiMessage: UIMessage): MessageFragment {
  const issues = structuralIssues(uiMessage, 'message');
  if (issues.length > 0) throw invalid('message(uiMessage)', issues);
  return toFragment(copyMessage(uiMessage));
}

function roleMessage(
  role: MessageRole,
  builder: string,
  content: string | UIMessage,
  options: TextMessageOptions,
): MessageFragment {
  if (typeof options !== 'object' || options === null) {
    throw invalid(builder, [
      { path: 'options', message: `expected an object, received ${describe(options)}` },
    ]);
  }
  if (options.id !== undefined && (typeof options.id !== 'string' || options.id === '')) {
    throw invalid(builder, [{ path: 'options.id', message: 'expected a non-empty string' }]);
  }
  if (typeof content === 'string') {
    const uiMessage: UIMessage = {
      id: options.id ?? generateId(),
      role,
      parts: [{ type: 'text', text: content }],
      ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
    };
    return toFragment(copyMessage(uiMessage));
  }
  const issues = structuralIssues(content, 'content');
  if (issues.length === 0 && content.role !== role) {
    issues.push({
      path: 'content.role',
      message: `expected "${role}", received "${content.role}"`,
    });
  }
  if (issues.length > 0) throw invalid(builder, issues);
  const uiMessage: UIMessage = {
    ...content,
    ...(options.id === undefined ? {} : { id: options.id }),
    ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
  };
  return toFragment(copyMessage(uiMessage));
}

function toFragment(uiMessage: UIMessage): MessageFragment {
  return {
    id: uiMessage.id,
    name: uiMessage.role,
    data: textOf(uiMessage),
    type: 'message',
    persist: true,
    codec: {
      // A fresh copy each time, so a caller who mutates what it got cannot change the fragment.
      encode: () => copyMessage(uiMessage),
      decode: () => ({
        id: uiMessage.id,
        role: uiMessage.role,
        text: textOf(uiMessage),
        parts: copyMessage(uiMessage).parts,
        ...(uiMessage.metadata === undefined ? {} : { metadata: uiMessage.metadata }),
      }),
    },
  };
}

function textOf(uiMessage: UIMessage): string {
  return uiMessage.parts
    .filter((part): part is { type: 'text'; text: string } => part.type === 'text')
    .map((part) => part.text)
    .join('\n\n');
}

/**
 * The quick checks a builder can make synchronously: an object with a non-empty string id, a
 * known role and an array of parts that each have a string `type`. The AI SDK's full validation
 * (part fields, tool states, metadata and data schemas) runs in `validateMessages`.
 */
export function structuralIssues(value: unknown, path: string): ValidationIssue[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ path, message: `expected a UIMessage object, received ${describe(value)}` }];
  }
  const record = value as Record<string, unknown>;
  const issues: ValidationIssue[] = [];
  if (typeof record.id !== 'string' || record.id === '') {
    issues.push({
      path: `${path}.id`,
      message: `expected a non-empty string, received ${describe(record.id)}`,
    });
  }
  if (typeof record.role !== 'string' || !roles.includes(record.role)) {
    issues.push({
      path: `${path}.role`,
      message: `expected "system", "user" or "assistant", received ${JSON.stringify(record.role) ?? 'undefined'}`,
    });
  }
  if (!Array.isArray(record.parts)) {
    issues.push({
      path: `${path}.parts`,
      message: `expected an array, received ${describe(record.parts)}`,
    });
  } else {
    record.parts.forEach((part: unknown, index) => {
      const type =
        typeof part === 'object' && part !== null ? (part as { type?: unknown }).type : undefined;
      if (typeof type !== 'string' || type === '') {
        issues.push({
          path: `${path}.parts[${index}].type`,
          message: 'expected a part with a string type',
        });
      }
    });
  }
  return issues;
}

function invalid(builder: string, issues: ValidationIssue[]): ValidationError {
  const list = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  return new ValidationError(`${builder}: ${list}.`, { issues });
}

function copyMessage(uiMessage: UIMessage): UIMessage {
  return JSON.parse(JSON.stringify(uiMessage)) as UIMessage;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
