import {
  checkMessages,
  type MessageCheck,
  type MessageSchemas,
  validateMessages,
} from '@ctxgraph/codecs';
import { type BuiltMessage, parsePlainMessages, settledMessage } from '@ctxgraph/codecs/internal';
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
   * The candidates' settled messages, in order, one AI SDK call for the list; only when it fails,
   * message by message, and then `messages` has a hole at each failure and `errors` says why.
   */
  async #validate(
    candidates: readonly unknown[],
  ): Promise<{ messages: (UIMessage | undefined)[]; errors?: Map<number, ValidationError> }> {
    if (candidates.length === 0) return { messages: [] };
    try {
      const messages = await validateMessages(candidates, this.#schemas);
      for (let index = 0; index < messages.length; index += 1) settle(messages[index] as UIMessage);
      return { messages };
    } catch (error) {
      if (!ValidationError.isInstance(error)) throw error;
      const checks = await checkMessages(candidates, this.#schemas);
      const messages = new Array<UIMessage | undefined>(checks.length);
      const errors = new Map<number, ValidationError>();
      checks.forEach((check, index) => {
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
