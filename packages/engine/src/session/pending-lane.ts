import { assistantText } from '@ctxgraph/codecs';
import { type BuiltMessage, builtMessage, encodeStorableMessage } from '@ctxgraph/codecs/internal';
import {
  type ContextFragment,
  EngineError,
  type EngineRecord,
  isLazyFragment,
  jsonIssues,
  LAZY_ID,
  type LazyFragment,
  ValidationError,
  withoutEngineMetadata,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { engineRecordFor, usageAddsFor } from '../usage/message-usage';
import type { MessageValidator } from './message-validator';

/** One message waiting for `save()`. */
interface PendingEntry {
  /** Position in call order: operations see only entries set before they were called. */
  seq: number;
  /** The encoded message; for a lazy fragment, set once its target is bound. */
  encoded: UIMessage | null;
  /** The lazy fragment this entry came from, if any. */
  readonly lazy: LazyFragment | null;
  /** The AI SDK's validated, frozen copy, once validated (a message is validated once). */
  validated: UIMessage | null;
  /** What a builder made the message from, when it did (frozen; maybe settled already). */
  readonly built: BuiltMessage | undefined;
  /** The engine's record `save()` writes beside the message (usage from `withUsage`), if any. */
  readonly engineRecord: EngineRecord | undefined;
  /** `withUsage(…, { add: true })`: the usage adds to that of the node the message replaces. */
  readonly addUsage: boolean;
}

/**
 * The pending lane: messages set but not yet saved, in call order. Each is encoded and checked
 * for storability when it is set (so `resolve()` never hands the model a turn `save()` would
 * refuse), validated by the AI SDK once, and a lazy "last assistant" fragment is bound to the
 * assistant message the caller was looking at, once, so a retry never retargets it.
 */
export class PendingLane {
  #entries: PendingEntry[] = [];
  #nextSeq = 0;

  /** The position the next entry gets: an operation called now sees entries below it. */
  get ticket(): number {
    return this.#nextSeq;
  }

  /** True when nothing is pending. */
  get empty(): boolean {
    return this.#entries.length === 0;
  }

  /**
   * Encodes and checks message fragments (all or nothing: a bad one adds none) and queues them.
   * Returns the lazy entries added, which the caller binds in call order.
   */
  add(fragments: ReadonlyArray<{ fragment: ContextFragment; index: number }>): void {
    const added: PendingEntry[] = [];
    for (const { fragment, index } of fragments) {
      if (isLazyFragment(fragment)) {
        assertStorable(where(index), { content: fragment[LAZY_ID].content }, 'content');
        added.push(newEntry(null, fragment, undefined, undefined, false));
        continue;
      }
      // The checks every store applies, so a message resolve() shows is one save() can store
      // (done once: a builder checked its message when it built it, and it is frozen since).
      const built = builtMessage(fragment);
      const encoded = built?.message ?? encodeStorableMessage(fragment, where(index));
      // `metadata.ctxgraph` is reserved for the engine: what an app (or the chat client it
      // forwards) puts there is dropped, never read as a record (a client may echo back messages
      // an earlier version handed out with the key in them, so it is ignored, not refused).
      const own = withoutEngineMetadata(encoded);
      added.push(
        newEntry(
          own,
          null,
          own === encoded ? built : undefined,
          engineRecordFor(fragment),
          usageAddsFor(fragment),
        ),
      );
    }
    for (const entry of added) {
      entry.seq = this.#nextSeq++;
      this.#entries.push(entry);
    }
  }

  /** The entries set before `ticket`, oldest first. */
  before(ticket: number): PendingEntry[] {
    return this.#entries.filter((entry) => entry.seq < ticket);
  }

  /** True when an entry was set before `ticket` (entries are in call order: the oldest decides). */
  hasBefore(ticket: number): boolean {
    const oldest = this.#entries[0];
    return oldest !== undefined && oldest.seq < ticket;
  }

  /** True when an entry set before `ticket` is a lazy fragment not bound yet. */
  hasUnbound(ticket: number): boolean {
    const entries = this.#entries;
    for (let index = 0; index < entries.length; index += 1) {
      const entry = entries[index] as PendingEntry;
      if (entry.seq >= ticket) break;
      if (entry.encoded === null) return true;
    }
    return false;
  }

  /**
   * Binds every unbound lazy entry set before `ticket` to its target: the newest assistant
   * message before it in the lane, else `lastSavedAssistant()`, else a new message. Called in
   * call order, when the engine's view of the branch is what the caller last saw.
   */
  bind(ticket: number, lastSavedAssistant: () => string | undefined): void {
    for (const [position, entry] of this.#entries.entries()) {
      if (entry.seq >= ticket) break;
      if (entry.encoded !== null || entry.lazy === null) continue;
      let targetId: string | undefined;
      for (let index = position - 1; index >= 0 && targetId === undefined; index -= 1) {
        const earlier = this.#entries[index]?.encoded;
        if (earlier?.role === 'assistant') targetId = earlier.id;
      }
      targetId ??= lastSavedAssistant();
      const content = entry.lazy[LAZY_ID].content;
      entry.encoded = (
        targetId === undefined ? assistantText(content) : assistantText(content, { id: targetId })
      ).codec.encode();
    }
  }

  /**
   * The engine records of the messages set before `ticket`, by message id (a later message with
   * the same id decides, as in {@link messages}); undefined when none has one.
   */
  engineRecords(ticket: number): Map<string, EngineRecord> | undefined {
    let records: Map<string, EngineRecord> | undefined;
    const entries = this.#entries;
    for (let index = 0; index < entries.length; index += 1) {
      const entry = entries[index] as PendingEntry;
      if (entry.seq >= ticket) break;
      const id = entry.encoded?.id;
      if (id === undefined) continue;
      if (entry.engineRecord !== undefined) {
        records ??= new Map();
        records.set(id, entry.engineRecord);
      } else {
        records?.delete(id);
      }
    }
    return records;
  }

  /**
   * The message ids (set before `ticket`) whose usage adds to the replaced node's
   * (`withUsage(…, { add: true })`; the last entry with the id decides); undefined when none.
   */
  usageAdds(ticket: number): Set<string> | undefined {
    let adds: Set<string> | undefined;
    const entries = this.#entries;
    for (let index = 0; index < entries.length; index += 1) {
      const entry = entries[index] as PendingEntry;
      if (entry.seq >= ticket) break;
      const id = entry.encoded?.id;
      if (id === undefined) continue;
      if (entry.addUsage && entry.engineRecord !== undefined) {
        adds ??= new Set();
        adds.add(id);
      } else {
        adds?.delete(id);
      }
    }
    return adds;
  }

  /** Whether `id` is the target of a lazy entry (for a clearer error when it is gone). */
  isLazyTarget(id: string): boolean {
    return this.#entries.some((entry) => entry.lazy !== null && entry.encoded?.id === id);
  }

  /**
   * The messages set before `ticket`, validated by the AI SDK (each once) and deduplicated by
   * id (a later message with the same id replaces the earlier one at its position). Throws a
   * `ValidationError` naming the first invalid message; nothing changes then.
   */
  async messages(ticket: number, validator: MessageValidator): Promise<UIMessage[]> {
    const entries = this.before(ticket);
    const unbound = entries.find((entry) => entry.encoded === null);
    if (unbound) throw new EngineError('A lazy fragment was not bound before use.');
    for (const entry of entries) {
      if (entry.validated === null && entry.built !== undefined)
        entry.validated = validator.settled(entry.built) ?? null;
    }
    if (entries.some((entry) => entry.validated === null)) {
      // The whole list goes to the validator, so an error names the message's place in the lane.
      const checks = await validator.check(entries.map((entry) => entry.encoded));
      const failed = checks.find((check) => !check.success);
      if (failed && !failed.success) {
        throw new ValidationError(
          `Pending message ${failed.error.message.replace(/^Invalid UIMessage /, '')} Nothing was saved.`,
          { issues: failed.error.issues, cause: failed.error },
        );
      }
      entries.forEach((entry, index) => {
        const check = checks[index];
        if (entry.validated === null && check?.success) entry.validated = check.message;
      });
    }
    return dedupe(entries.map((entry) => entry.validated as UIMessage));
  }

  /**
   * What {@link messages} returns, at once, when each entry set before `ticket` is validated or is
   * a plain text message the validator settles synchronously (the usual turn); undefined when
   * some entry needs the AI SDK (or a lazy one is unbound), and then `messages()` does the work.
   */
  messagesNow(ticket: number, validator: MessageValidator): UIMessage[] | undefined {
    const entries = this.#entries;
    let count = 0;
    let unchecked: PendingEntry[] | undefined;
    for (; count < entries.length; count += 1) {
      const entry = entries[count] as PendingEntry;
      if (entry.seq >= ticket) break;
      if (entry.validated !== null) continue;
      if (entry.encoded === null) return undefined;
      const settled = entry.built && validator.settled(entry.built);
      if (settled !== undefined) {
        entry.validated = settled;
      } else {
        unchecked ??= [];
        unchecked.push(entry);
      }
    }
    if (unchecked !== undefined) {
      const settled = validator.checkNow(unchecked.map((entry) => entry.encoded));
      if (settled === undefined) return undefined;
      unchecked.forEach((entry, index) => {
        entry.validated = settled[index] ?? null;
      });
    }
    const messages: UIMessage[] = [];
    for (let index = 0; index < count; index += 1)
      messages.push((entries[index] as PendingEntry).validated as UIMessage);
    return dedupe(messages);
  }

  /** Drops the entries set before `ticket` (after they were saved, or on a branch switch). */
  drop(ticket: number): void {
    const entries = this.#entries;
    // Entries are in call order: those set before `ticket` are a prefix (usually all of them).
    let count = 0;
    while (count < entries.length && (entries[count] as PendingEntry).seq < ticket) count += 1;
    this.#entries = count === entries.length ? [] : entries.slice(count);
  }

  /** `discardPending()`: drops the entries set before `ticket`; returns how many there were. */
  discard(ticket: number): number {
    const count = this.before(ticket).length;
    this.drop(ticket);
    return count;
  }

  /** Drops every pending entry; returns how many there were. */
  clear(): number {
    const count = this.#entries.length;
    this.#entries = [];
    return count;
  }
}

/** Later messages with the same id replace earlier ones, at the earlier one's position. */
function dedupe<T extends { id: string }>(messages: T[]): T[] {
  if (messages.length < 2 || (messages.length === 2 && messages[0]?.id !== messages[1]?.id))
    return messages;
  const positions = new Map<string, number>();
  const result: T[] = [];
  for (const entry of messages) {
    const index = positions.get(entry.id);
    if (index === undefined) {
      positions.set(entry.id, result.length);
      result.push(entry);
    } else {
      result[index] = entry;
    }
  }
  return result;
}

/** A pending entry before it gets its place (`seq`) in the lane. */
function newEntry(
  encoded: UIMessage | null,
  lazy: LazyFragment | null,
  built: BuiltMessage | undefined,
  engineRecord: EngineRecord | undefined,
  addUsage: boolean,
): PendingEntry {
  return { seq: 0, encoded, lazy, validated: null, built, engineRecord, addUsage };
}

/** Where a fragment came from, for an error: `set(...fragments): fragments[2]`. */
function where(index: number): string {
  return `set(...fragments): fragments[${index}]`;
}

function assertStorable(where: string, value: unknown, field: string): void {
  const issues = jsonIssues(value, field);
  if (issues.length > 0) {
    const shown = issues.slice(0, 5).map((issue) => `${issue.path}: ${issue.message}`);
    throw new ValidationError(`${where}: cannot be stored: ${shown.join('; ')}.`, { issues });
  }
}
