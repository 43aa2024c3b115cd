import {
  type ContextFragment,
  type FragmentCodec,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { generateId, type UIMessage } from 'ai';
import {
  assertStorableMessage,
  describe,
  joinPath,
  messageError,
  messageIssues,
  roles,
  validId,
} from './storable-message';

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
  assertStorableMessage(uiMessage, 'message(uiMessage)');
  return toFragment(copyMessage(uiMessage));
}

function roleMessage(
  role: MessageRole,
  builder: string,
  content: string | UIMessage,
  options: TextMessageOptions,
): MessageFragment {
  // The argument the content came from, to name it in errors (built only for an error).
  const argument = (): string => builder.slice(builder.indexOf('(') + 1, builder.indexOf(','));
  if (typeof options !== 'object' || options === null) {
    throw messageError(builder, undefined, [
      { path: 'options', message: `expected an object, received ${describe(options)}` },
    ]);
  }
  const contentIsText = typeof content === 'string';
  if (
    !contentIsText &&
    (typeof content !== 'object' || content === null || Array.isArray(content))
  ) {
    throw messageError(builder, undefined, [
      { path: argument(), message: `expected a UIMessage object, received ${describe(content)}` },
    ]);
  }
  const uiMessage: UIMessage = contentIsText
    ? {
        id: options.id ?? generateId(),
        role,
        parts: [{ type: 'text', text: content }],
        ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
      }
    : {
        ...content,
        ...(options.id === undefined ? {} : { id: options.id }),
        ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
      };
  // Checked on the message as it will be stored (so the depth of metadata counts from the
  // message, as a store counts it), each problem named by the argument it came from.
  const found = messageIssues(uiMessage);
  if (!contentIsText && roles.includes(uiMessage.role) && uiMessage.role !== role) {
    found.push({ path: 'role', message: `expected "${role}", received "${uiMessage.role}"` });
  }
  if (found.length > 0) {
    const issues = found.map((issue) => ({
      path: callerPath(issue.path, argument(), contentIsText, options),
      message: issue.message,
    }));
    throw messageError(builder, validId(uiMessage), issues);
  }
  // A message built here from text holds nothing the caller can reach but its metadata (strings
  // are immutable), so only that is copied; content the caller passed is copied whole.
  if (contentIsText) {
    if (uiMessage.metadata !== undefined) uiMessage.metadata = copyJson(uiMessage.metadata);
    return toFragment(uiMessage);
  }
  return toFragment(copyMessage(uiMessage));
}

/** Where a problem found in the built message came from: `options.id`, `content.parts[0]`, … */
function callerPath(
  path: string,
  argument: string,
  contentIsText: boolean,
  options: TextMessageOptions,
): string {
  const head = /^[^.[]*/.exec(path)?.[0] ?? '';
  const rest = path.slice(head.length);
  if (head === 'id' && options.id !== undefined) return `options.id${rest}`;
  if (head === 'metadata' && options.metadata !== undefined) return `options.metadata${rest}`;
  if (contentIsText && path === 'parts[0].text') return argument;
  return joinPath(argument, path);
}

/**
 * The `encode` of every codec the builders made, by codec. Each was checked when built and encodes
 * a private copy no caller can reach, so what it encodes is still storable.
 */
const checkedEncoders = new WeakMap<object, () => UIMessage>();

function toFragment(uiMessage: UIMessage): MessageFragment {
  // A fresh copy each time, so a caller who mutates what it got cannot change the fragment.
  const encode = (): UIMessage => copyMessage(uiMessage);
  const codec: FragmentCodec<UIMessage, MaterializedMessage> = {
    encode,
    decode: () => {
      const copy = copyMessage(uiMessage);
      return {
        id: copy.id,
        role: copy.role,
        text: textOf(copy),
        parts: copy.parts,
        ...(copy.metadata === undefined ? {} : { metadata: copy.metadata }),
      };
    },
  };
  checkedEncoders.set(codec, encode);
  return {
    id: uiMessage.id,
    name: uiMessage.role,
    data: textOf(uiMessage),
    type: 'message',
    persist: true,
    codec,
  };
}

/**
 * A message fragment's `UIMessage`, checked with the rules every store applies (see
 * {@link assertStorableMessage}; `where` names the caller in the error). A fragment made by
 * `user()`, `assistant()`, `assistantText()` or `message()` was checked when it was built and its
 * codec encodes a private copy, so it is not walked again; any other codec's output is.
 *
 * @example
 * ```ts
 * const encoded = encodeStorableMessage(user('Hello'), 'set(...fragments): fragments[0]');
 * ```
 */
export function encodeStorableMessage(fragment: ContextFragment, where: string): UIMessage {
  const codec = fragment.codec as { encode?: unknown } | undefined;
  const checked = codec === undefined ? undefined : checkedEncoders.get(codec);
  if (checked !== undefined && codec?.encode === checked) return checked();
  const encoded = (codec?.encode as (() => unknown) | undefined)?.();
  assertStorableMessage(encoded, where);
  return encoded;
}

function textOf(uiMessage: UIMessage): string {
  let text: string | undefined;
  for (const part of uiMessage.parts) {
    if (part.type !== 'text') continue;
    text = text === undefined ? part.text : `${text}\n\n${part.text}`;
  }
  return text ?? '';
}

/**
 * What a JSON round trip of a message gives, without the text in between: every message copied
 * here passed the storable checks (plain JSON values, no cycle, bounded depth), so a direct copy
 * with JSON's rules (an `undefined` property left out, `undefined` in an array and `-0` written as
 * `null` and `0`) gives the same value several times faster.
 */
function copyMessage(uiMessage: UIMessage): UIMessage {
  return copyJson(uiMessage) as UIMessage;
}

function copyJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return Object.is(value, -0) ? 0 : value;
  if (Array.isArray(value)) {
    const copy: unknown[] = new Array(value.length);
    for (let index = 0; index < value.length; index += 1) {
      const item: unknown = value[index];
      copy[index] = item === undefined ? null : copyJson(item);
    }
    return copy;
  }
  const record = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(record)) {
    const item = record[key];
    if (item === undefined) continue;
    // An own "__proto__" key (JSON.parse makes one) must not set the copy's prototype.
    if (key === '__proto__')
      Object.defineProperty(copy, key, {
        value: copyJson(item),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else copy[key] = copyJson(item);
  }
  return copy;
}
