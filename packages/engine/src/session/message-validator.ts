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
   * error, and it is never shown.
   */
  async entries(nodes: readonly MessageNodeRecord[]): Promise<ChainEntry[]> {
    if (nodes.length === 0) return [];
    const live = nodes.filter((node) => readDropped(node) === null);
    const liveChecks = await this.check(live.map((node) => node.message));
    let next = 0;
    const checks = nodes.map((node) =>
      readDropped(node) === null ? liveChecks[next++] : undefined,
    );
    return nodes.map((node, index) => {
      if (readDropped(node) !== null) return { node, message: null, error: null };
      const check = checks[index];
      if (check?.success) return { node, message: check.message, error: null };
      const error =
        check && !check.success
          ? check.error
          : new ValidationError(`Message "${node.id}" did not validate.`);
      return { node, message: null, error };
    });
  }
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
 * elsewhere). With `dropUndefined`, object keys holding `undefined` are deleted first, as a JSON
 * round trip would. The AI SDK's parsed copies are fresh objects, so this never touches input.
 */
function deepFreeze<T>(value: T, dropUndefined = false): T {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current !== 'object' || current === null || Object.isFrozen(current)) continue;
    const record = current as Record<string, unknown>;
    const isArray = Array.isArray(record);
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      const entry = record[key];
      if (entry === undefined && dropUndefined && !isArray) delete record[key];
      else if (typeof entry === 'object' && entry !== null) stack.push(entry);
    }
    Object.freeze(record);
  }
  return value;
}
