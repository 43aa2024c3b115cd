import {
  checkMessages,
  type MessageCheck,
  type MessageSchemas,
  validateMessages,
} from '@ctxgraph/codecs';
import {
  type BuiltMessage,
  parsePlainMessages,
  plainParser,
  settledMessage,
} from '@ctxgraph/codecs/internal';
import { type MessageNodeRecord, readDropped, ValidationError } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import type { ChainEntry } from './chain-cache';

/**
 * Validates messages with the AI SDK against the engine's schemas, and returns them in the one
 * shape the engine hands out: the AI SDK's parsed copy, made JSON-exact (what a store gives back
 * after a round trip) and deeply frozen, so a warm engine shows byte for byte what a fresh one
 * reads, and no caller can change the engine's state through what it was given.
 */
export class MessageValidator {
  readonly #schemas: MessageSchemas;

  constructor(schemas: MessageSchemas) {
    this.#schemas = schemas;
  }

  /** Validates a list in one AI SDK call; only when it fails, message by message to say which. */
  async check(candidates: readonly unknown[]): Promise<MessageCheck[]> {
    if (candidates.length === 0) return [];
    try {
      const messages = await validateMessages(candidates, this.#schemas);
      return messages.map(
        (message, index): MessageCheck => ({ index, success: true, message: settle(message) }),
      );
    } catch (error) {
      if (!ValidationError.isInstance(error)) throw error;
      return (await checkMessages(candidates, this.#schemas)).map((check) =>
        check.success ? { ...check, message: settle(check.message) } : check,
      );
    }
  }

  /**
   * The settled messages at once when every candidate is a plain text message (the SDK's result,
   * computed synchronously); undefined when any needs the SDK, and then `check()` does it.
   */
  checkNow(candidates: readonly unknown[]): UIMessage[] | undefined {
    return parsePlainMessages(candidates, this.#schemas)?.map(settle);
  }

  /**
   * A builder's message as validation would settle it, without a copy (it is frozen already and
   * in the AI SDK's shape); undefined when it must be validated.
   */
  settled(built: BuiltMessage): UIMessage | undefined {
    return settledMessage(built, this.#schemas);
  }

  /**
   * Stored nodes as chain entries: each with its settled message, or why it does not validate. A
   * tombstone (its engine record has `dropped`) is not validated: its entry has neither message nor
   * error, and it is never shown. The live messages are validated in one call; only when one of
   * them fails are they checked one by one, to say which.
   */
  async entries(nodes: readonly MessageNodeRecord[]): Promise<ChainEntry[]> {
    const count = nodes.length;
    if (count === 0) return [];
    // One pass to find the tombstones; a chain without any (the common case) needs no filtering.
    let tombstones: boolean[] | undefined;
    for (let index = 0; index < count; index += 1) {
      if (readDropped(nodes[index] as MessageNodeRecord) === null) continue;
      tombstones ??= new Array<boolean>(count).fill(false);
      tombstones[index] = true;
    }
    const live: unknown[] = [];
    for (let index = 0; index < count; index += 1)
      if (tombstones?.[index] !== true) live.push((nodes[index] as MessageNodeRecord).message);
    const { messages, errors } = await this.#validate(live);
    const entries = new Array<ChainEntry>(count);
    let next = 0;
    for (let index = 0; index < count; index += 1) {
      const node = nodes[index] as MessageNodeRecord;
      if (tombstones?.[index] === true) {
        entries[index] = { node, message: null, error: null };
        continue;
      }
      const error = errors?.get(next);
      const message = messages[next++];
      entries[index] =
        message === undefined
          ? { node, message: null, error: error ?? invalid(node) }
          : { node, message, error: null };
    }
    return entries;
  }

  /**
   * The candidates' settled messages, in order. Plain text messages are parsed by hand (what the
   * SDK would return for them) and settled part by part; the rest go to the AI SDK in one call,
   * and only when that fails, message by message: then `messages` has a hole at each failure and
   * `errors` says why.
   */
  async #validate(
    candidates: readonly unknown[],
  ): Promise<{ messages: (UIMessage | undefined)[]; errors?: Map<number, ValidationError> }> {
    const count = candidates.length;
    const messages = new Array<UIMessage | undefined>(count);
    const plain = plainParser(this.#schemas);
    let rest: number[] | undefined;
    for (let index = 0; index < count; index += 1) {
      const parsed = plain(candidates[index]);
      if (parsed !== undefined) {
        messages[index] = settleParsed(parsed);
      } else {
        rest ??= [];
        rest.push(index);
      }
    }
    if (rest === undefined) return { messages };
    const others = rest.map((index) => candidates[index]);
    try {
      const validated = await validateMessages(others, this.#schemas);
      validated.forEach((message, at) => {
        messages[rest[at] as number] = settle(message);
      });
      return { messages };
    } catch (error) {
      if (!ValidationError.isInstance(error)) throw error;
      const errors = new Map<number, ValidationError>();
      (await checkMessages(others, this.#schemas)).forEach((check, at) => {
        const index = rest[at] as number;
        if (check.success) messages[index] = settle(check.message);
        else errors.set(index, check.error);
      });
      return { messages, errors };
    }
  }
}

/** The error of a stored message the SDK refused without saying why. */
function invalid(node: MessageNodeRecord): ValidationError {
  return new ValidationError(`Message "${node.id}" did not validate.`);
}

/**
 * The JSON-exact, deeply frozen copy of a validated message: keys holding `undefined` are gone
 * (as after any store round trip), and nothing in it can be changed.
 */
function settle(message: UIMessage): UIMessage {
  return deepFreeze(message, true);
}

/**
 * {@link settle} for a message in the shape the AI SDK's parse returns (a fresh message whose
 * `parts` is a fresh array of fresh, flat parts): each part's own values and the metadata are
 * settled, then the part, the list and the message are frozen, without the generic walk's stack
 * and frozen checks for the three levels it knows (a long chat's cold read settles every message).
 */
function settleParsed(message: UIMessage): UIMessage {
  const record = message as unknown as Record<string, unknown>;
  const parts = message.parts as unknown[];
  for (let index = 0; index < parts.length; index += 1) settleObject(parts[index]);
  Object.freeze(parts);
  settleObject(record);
  return message;
}

/** Deletes an object's keys holding `undefined`, deep-freezes its object values, freezes it. */
function settleObject(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  const record = value as Record<string, unknown>;
  // `for…in` walks the object's cached keys without allocating a list; an inherited key (a
  // polluted prototype) is left alone.
  for (const key in record) {
    const entry = record[key];
    // A message's `parts` was frozen part by part already; its metadata (or a part's nested
    // value, should the hand parse ever keep one) is walked whole.
    if (entry === undefined) {
      if (Object.hasOwn(record, key)) delete record[key];
    } else if (typeof entry === 'object' && entry !== null && Object.hasOwn(record, key)) {
      deepFreeze(entry, true);
    }
  }
  Object.freeze(record);
}

/**
 * Freezes a value and everything in it, without recursion (the depth of stored values is bounded
 * elsewhere); a part already frozen is not walked again. With `dropUndefined`, object keys holding
 * `undefined` are deleted first, as a JSON round trip would. The AI SDK's parsed copies are fresh
 * objects, so this never touches input. Arrays are walked by index and objects by their own keys
 * (a `for…in` walk with an own-key check per key cost twice as much on a long chat's cold read).
 */
function deepFreeze<T>(value: T, dropUndefined = false): T {
  const stack: object[] = [];
  let current: unknown = value;
  for (;;) {
    if (typeof current === 'object' && current !== null && !Object.isFrozen(current)) {
      if (Array.isArray(current)) {
        for (let index = 0; index < current.length; index += 1) {
          const entry: unknown = current[index];
          if (typeof entry === 'object' && entry !== null) stack.push(entry);
        }
      } else {
        const record = current as Record<string, unknown>;
        const keys = Object.keys(record);
        for (let index = 0; index < keys.length; index += 1) {
          const key = keys[index] as string;
          const entry = record[key];
          if (typeof entry === 'object') {
            if (entry !== null) stack.push(entry);
          } else if (entry === undefined && dropUndefined) {
            delete record[key];
          }
        }
      }
      Object.freeze(current);
    }
    const next = stack.pop();
    if (next === undefined) return value;
    current = next;
  }
}
