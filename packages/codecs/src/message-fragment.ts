import {
  type ContextFragment,
  describeValue,
  type FragmentCodec,
  prefixPath,
  stringProblem,
  ValidationError,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { newMessageId } from './message-id';
import {
  assertStorableMessage,
  identifierProblem,
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
  /**
   * A fixed message id. @default a new id: 16 characters of `[0-9A-Za-z]` that sort by the time
   * they were made
   */
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
      `assistantText(text, options): text must be a string, received ${describeValue(text)}.`,
      {
        issues: [{ path: 'text', message: `expected string, received ${describeValue(text)}` }],
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
  const copy = deepFreeze(copyMessage(uiMessage));
  return toFragment(copy, textOf(copy), false);
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
      { path: 'options', message: `expected an object, received ${describeValue(options)}` },
    ]);
  }
  const contentIsText = typeof content === 'string';
  if (
    !contentIsText &&
    (typeof content !== 'object' || content === null || Array.isArray(content))
  ) {
    throw messageError(builder, undefined, [
      {
        path: argument(),
        message: `expected a UIMessage object, received ${describeValue(content)}`,
      },
    ]);
  }
  // The usual case, a text message with a valid id and clean text, needs no walk: nothing else in
  // it can be wrong. Anything else takes the full check below, which names every problem.
  if (contentIsText && options.metadata === undefined) {
    const id = options.id ?? newMessageId();
    if (identifierProblem(id) === undefined && cleanText(content)) {
      const part = Object.freeze({ type: 'text', text: content });
      const parts = Object.freeze([part]) as unknown as UIMessage['parts'];
      return toFragment(Object.freeze({ id, role, parts }), content, true);
    }
  }
  // In the AI SDK's key order (id, role, metadata, parts), as its validation returns a message.
  const uiMessage: UIMessage = contentIsText
    ? textMessage(options.id ?? newMessageId(), role, options.metadata, content)
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
    return toFragment(deepFreeze(uiMessage), content, true);
  }
  const copy = deepFreeze(copyMessage(uiMessage));
  return toFragment(copy, textOf(copy), false);
}

/** A text message in the AI SDK's key order; `metadata` only when given. */
function textMessage(id: string, role: MessageRole, metadata: unknown, text: string): UIMessage {
  const parts: UIMessage['parts'] = [{ type: 'text', text }];
  return metadata === undefined ? { id, role, parts } : { id, role, metadata, parts };
}

/** True when a store takes `text` as it is (the stores' string rule, any length). */
function cleanText(text: string): boolean {
  return stringProblem(text) === undefined;
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
  return prefixPath(argument, path);
}

/** Where a builder's `encode` keeps the message it copies (see {@link builtMessage}). */
const BUILT: unique symbol = Symbol('ctxgraph.builtMessage');

/** What a builder made a fragment from (see {@link builtMessage}). */
export interface BuiltMessage {
  /** The checked message, deeply frozen: it never changes, and nothing else can reach it. */
  readonly message: UIMessage;
  /**
   * True when the message is in the exact shape the AI SDK's validation returns for it (a text
   * message built here: the same keys in the same order), so validating it without a
   * `metadataSchema` would give an equal copy.
   */
  readonly settled: boolean;
}

type BuiltEncode = (() => UIMessage) & { [BUILT]?: BuiltMessage };

function toFragment(uiMessage: UIMessage, text: string, settled: boolean): MessageFragment {
  // A fresh copy each time, so a caller who mutates what it got cannot change the fragment. The
  // function carries the frozen original: a codec whose encode was replaced carries nothing.
  const encode: BuiltEncode = () => copyMessage(uiMessage);
  encode[BUILT] = { message: uiMessage, settled };
  const codec: FragmentCodec<UIMessage, MaterializedMessage> = {
    encode,
    decode: () => {
      const copy = copyMessage(uiMessage);
      return {
        id: copy.id,
        role: copy.role,
        text,
        parts: copy.parts,
        ...(copy.metadata === undefined ? {} : { metadata: copy.metadata }),
      };
    },
  };
  return {
    id: uiMessage.id,
    name: uiMessage.role,
    data: text,
    type: 'message',
    persist: true,
    codec,
  };
}

/**
 * For a fragment made by `user()`, `assistant()`, `assistantText()` or `message()` whose `encode`
 * was not replaced: the message it was built from, checked and deeply frozen, without a copy;
 * undefined for any other fragment. For code that only reads the message (the engine's pending
 * lane); `codec.encode()` gives a copy to change.
 *
 * @example
 * ```ts
 * builtMessage(user('Hello', { id: 'q1' }))?.message; // { id: 'q1', role: 'user', parts: [...] }, frozen
 * ```
 */
export function builtMessage(fragment: ContextFragment): BuiltMessage | undefined {
  const encode = (fragment.codec as { encode?: BuiltEncode } | undefined)?.encode;
  return typeof encode === 'function' ? encode[BUILT] : undefined;
}

/** Freezes a value and everything in it (a copy made here: plain JSON, depth already bounded). */
function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const key in value) {
    if (Object.hasOwn(value, key)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return Object.freeze(value);
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
  const built = builtMessage(fragment);
  if (built !== undefined) return copyMessage(built.message);
  const encoded = (fragment.codec?.encode as (() => unknown) | undefined)?.();
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
