import type { UIMessage } from 'ai';
import type { BuiltMessage } from './message-fragment';
import type { MessageSchemas } from './validate-messages';

/**
 * The AI SDK's validation result for a list made only of plain text messages (text, reasoning and
 * step-start parts), computed synchronously, or `undefined` when any message needs the SDK (or a
 * `metadataSchema` is given): then call `validateMessages`. Never rejects a message the SDK would
 * accept and never accepts one it would refuse.
 *
 * @example
 * ```ts
 * const messages = parsePlainMessages(list) ?? (await validateMessages(list));
 * ```
 */
export function parsePlainMessages(
  messages: readonly unknown[],
  schemas: MessageSchemas = {},
): UIMessage[] | undefined {
  if (!Array.isArray(messages)) return undefined;
  const parse = plainParser(schemas);
  const parsed: UIMessage[] = [];
  for (const candidate of messages) {
    const message = parse(candidate);
    if (message === undefined) return undefined;
    parsed.push(message);
  }
  return parsed;
}

/**
 * A builder's message as validation with `schemas` would return it, without a copy: the frozen
 * message itself when it is in the AI SDK's parsed shape and the hand parse applies (no
 * `metadataSchema`); undefined when it must be validated.
 *
 * @example
 * ```ts
 * const built = builtMessage(fragment);
 * const message = built && settledMessage(built, schemas);
 * ```
 */
export function settledMessage(
  built: BuiltMessage,
  schemas: MessageSchemas = {},
): UIMessage | undefined {
  return built.settled && plainParser(schemas) === parsePlainMessage ? built.message : undefined;
}

/**
 * The hand parse of plain text messages ({@link parsePlainMessage}), or one that leaves every
 * message to the SDK when a `metadataSchema` must see each message's metadata.
 */
export function plainParser(
  schemas: MessageSchemas,
): (candidate: unknown) => UIMessage | undefined {
  if (schemas.metadataSchema != null) return () => undefined;
  return parsePlainMessage;
}

/**
 * The AI SDK's parse of a message made only of text, reasoning and step-start parts, done by hand:
 * most of a conversation, and the part of validation that dominates a cold read of a long chat
 * (the SDK's zod schema costs several microseconds a message). It accepts a strict subset of what
 * the SDK's `uiMessagesSchema` accepts and returns what the SDK returns for it, key for key and in
 * the same order: known keys in schema order, unknown keys dropped, an optional key given as
 * `undefined` kept as `undefined`, `metadata` passed through as the same value. Anything else
 * (another part type, provider metadata, an object that is not plain, any doubt) returns
 * `undefined` and goes to the SDK, which also produces every error message.
 *
 * Only without a `metadataSchema`: with one, the SDK validates metadata too.
 */
export function parsePlainMessage(candidate: unknown): UIMessage | undefined {
  if (!isPlainObject(candidate)) return undefined;
  const { id, role, parts } = candidate;
  if (typeof id !== 'string') return undefined;
  if (role !== 'user' && role !== 'assistant' && role !== 'system') return undefined;
  if (!Array.isArray(parts) || Object.getPrototypeOf(parts) !== Array.prototype) return undefined;
  // The SDK's refinement: only an assistant message may have no parts.
  if (parts.length === 0 && role !== 'assistant') return undefined;
  const parsedParts: UIMessage['parts'] = [];
  for (let index = 0; index < parts.length; index += 1) {
    // A hole in a sparse array reads as undefined: not a plain object, so the SDK decides.
    const part = parsePlainPart(parts[index]);
    if (part === undefined) return undefined;
    parsedParts.push(part);
  }
  const parsed: Record<string, unknown> = { id, role };
  if ('metadata' in candidate) parsed.metadata = candidate.metadata;
  parsed.parts = parsedParts;
  return parsed as unknown as UIMessage;
}

type PlainPart = UIMessage['parts'][number];

function parsePlainPart(part: unknown): PlainPart | undefined {
  if (!isPlainObject(part)) return undefined;
  switch (part.type) {
    case 'text': {
      if (typeof part.text !== 'string' || !optionalState(part) || !noProviderMetadata(part))
        return undefined;
      const parsed: Record<string, unknown> = { type: 'text', text: part.text };
      copyOptional(part, parsed, 'state');
      copyOptional(part, parsed, 'providerMetadata');
      return parsed as unknown as PlainPart;
    }
    case 'reasoning': {
      if (
        typeof part.text !== 'string' ||
        !(part.id === undefined || typeof part.id === 'string') ||
        !optionalState(part) ||
        !noProviderMetadata(part)
      )
        return undefined;
      const parsed: Record<string, unknown> = { type: 'reasoning' };
      copyOptional(part, parsed, 'id');
      parsed.text = part.text;
      copyOptional(part, parsed, 'state');
      copyOptional(part, parsed, 'providerMetadata');
      return parsed as unknown as PlainPart;
    }
    case 'step-start':
      return { type: 'step-start' };
    default:
      return undefined;
  }
}

function optionalState(part: Record<string, unknown>): boolean {
  return part.state === undefined || part.state === 'streaming' || part.state === 'done';
}

// Provider metadata has a schema of its own (records of JSON values): left to the SDK.
function noProviderMetadata(part: Record<string, unknown>): boolean {
  return part.providerMetadata === undefined;
}

function copyOptional(
  from: Record<string, unknown>,
  to: Record<string, unknown>,
  key: string,
): void {
  if (key in from) to[key] = from[key];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
