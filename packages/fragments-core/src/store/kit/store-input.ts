import { ValidationError, type ValidationIssue } from '../../errors/errors';
import type { JsonObject } from '../../json';
import { nextBranchName } from '../branch-names';
import type {
  AppendInput,
  CommitInput,
  ForkBranchInput,
  ListChatsInput,
  SaveContextInput,
} from '../context-store';
import type { StoredMessage } from '../records';
import { newVersionIssue } from './version-input';

// Shared input checks for ContextStore implementations, so that every store refuses the same bad
// input with the same clear error before it touches its database. Third-party stores may use them.

// A high surrogate not followed by a low one, or a low one not preceded by a high one. Such
// strings are not valid Unicode: PostgreSQL refuses them and JSON encoders disagree on them.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * True when a string has no lone surrogate. `String.prototype.isWellFormed` (ES2024, in every
 * runtime this package supports) answers without a regular expression's scan; the pattern above
 * stays for a runtime that lacks it.
 */
const isWellFormed: (value: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function'
    ? (value) => (value as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (value) => !loneSurrogate.test(value);

/** The longest id or name a store accepts, in UTF-16 code units. */
export const MAX_IDENTIFIER_LENGTH = 512;

/**
 * The longest id or name a store accepts, in UTF-8 bytes (512 ASCII characters, 170 CJK ones).
 * Keys made of two or three identifiers must fit one B-tree index entry (PostgreSQL's limit is
 * about 2,700 bytes), so every store accepts exactly this and nothing longer.
 */
export const MAX_IDENTIFIER_BYTES = 512;

/**
 * The deepest nesting of arrays and objects a stored message or metadata value may have, counting
 * the message (or metadata) object itself as level 1: a part's `data` sits at level 3. Deeper
 * values are refused with a `ValidationError` instead of overflowing a stack somewhere later.
 */
export const MAX_JSON_DEPTH = 128;

/** UTF-8 length of a string (a surrogate pair is 4 bytes; lone surrogates are refused earlier). */
export function utf8Length(value: string): number {
  let bytes = 0;
  for (let index = 0; index < value.length; index += 1) {
    const code = value.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      index += 1;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Why a store cannot keep `value` as a JSON string (the NUL character, or a lone UTF-16 surrogate
 * such as half an emoji), or undefined when it can: the rule every JSON check applies to strings.
 */
export function stringProblem(value: string): string | undefined {
  if (value.includes('\u0000')) return 'string contains the NUL character';
  if (!isWellFormed(value))
    return 'string contains a lone UTF-16 surrogate (not valid Unicode text)';
  return undefined;
}

/** The default and the largest page size of `listChats`. */
export const CHAT_PAGE_SIZE: { readonly default: number; readonly max: number } = {
  default: 20,
  max: 100,
};

/** Why `value` is not a valid id or name, or undefined when it is (see {@link assertIdentifier}). */
export function identifierProblem(value: unknown): string | undefined {
  if (typeof value !== 'string')
    return `expected a string, received ${value === null ? 'null' : typeof value}`;
  if (value.length === 0) return 'expected a non-empty string';
  if (value.length > MAX_IDENTIFIER_LENGTH)
    return `expected at most ${MAX_IDENTIFIER_LENGTH} characters, received ${value.length}`;
  // UTF-8 takes at most 3 bytes per UTF-16 code unit: only a long id needs counting.
  if (value.length * 3 > MAX_IDENTIFIER_BYTES) {
    const bytes = utf8Length(value);
    if (bytes > MAX_IDENTIFIER_BYTES)
      return `expected at most ${MAX_IDENTIFIER_BYTES} bytes of UTF-8, received ${bytes}`;
  }
  // NUL cannot be stored by PostgreSQL text and truncates C strings elsewhere.
  if (value.includes('\u0000')) return 'must not contain the NUL character';
  if (!isWellFormed(value)) {
    return 'must not contain a lone UTF-16 surrogate (not valid Unicode text)';
  }
  return undefined;
}

/**
 * Checks an id or name (chat id, user id, message id, branch or checkpoint name): a non-empty
 * string of at most {@link MAX_IDENTIFIER_LENGTH} characters and {@link MAX_IDENTIFIER_BYTES}
 * bytes of UTF-8, without NUL or lone surrogates. Any other character,
 * unicode included, is fine. Throws `ValidationError` naming the method and field.
 */
export function assertIdentifier(
  method: string,
  field: string,
  value: unknown,
): asserts value is string {
  const problem = identifierProblem(value);
  if (problem) {
    throw new ValidationError(`${method}: ${field} ${problem}.`, {
      issues: [{ path: field, message: problem }],
    });
  }
}

/** Checks that `value` is a plain JSON object (for metadata). */
export function assertJsonObject(
  method: string,
  field: string,
  value: unknown,
): asserts value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(`${method}: ${field} must be a plain JSON object.`, {
      issues: [{ path: field, message: 'expected an object' }],
    });
  }
  const issues: ValidationIssue[] = [];
  collectJsonIssues(value, field, issues, []);
  if (issues.length > 0) throw jsonError(method, issues);
}

/**
 * The problems that keep `value` from being stored as JSON (see {@link toJsonText}), each with
 * its path under `field`; empty when it is storable. At most 50 are listed.
 */
export function jsonIssues(value: unknown, field: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  collectJsonIssues(value, field, issues, []);
  return issues;
}

/**
 * Serializes a value to JSON, refusing what would not come back the same: functions, symbols,
 * bigints, non-finite numbers, class instances, cycles, and strings with NUL. Keys holding
 * `undefined` are dropped (as JSON does).
 */
export function toJsonText(method: string, field: string, value: unknown): string {
  const issues: ValidationIssue[] = [];
  collectJsonIssues(value, field, issues, []);
  if (issues.length > 0) throw jsonError(method, issues);
  return JSON.stringify(value);
}

function jsonError(method: string, issues: ValidationIssue[]): ValidationError {
  const shown = issues.slice(0, 5).map((issue) => `${issue.path}: ${issue.message}`);
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : '';
  return new ValidationError(`${method}: not storable as JSON: ${shown.join('; ')}${more}.`, {
    issues,
  });
}

// One walk over a value, allocating nothing unless it finds a problem: the path of a problem is
// built from the stack of keys only when one is reported. Recursion is bounded by MAX_JSON_DEPTH.
function collectJsonIssues(
  value: unknown,
  field: string,
  issues: ValidationIssue[],
  ancestors: object[],
): void {
  if (isStorableJson(value, ancestors.length)) return;
  collectFrom(value, { field, keys: [], issues, ancestors });
}

/**
 * Whether `value` is storable JSON, by the rules {@link collectFrom} reports on, answered without
 * allocating: no key path, no list of ancestors. A cycle needs no list either: it nests without
 * end, so it fails the depth rule. Every value is checked this way first and walked again, with
 * paths, only when it fails (an input with a problem is rare; a batch of 10,000 good messages is
 * not).
 */
function isStorableJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
      return !value.includes('\u0000') && isWellFormed(value);
    case 'boolean':
    case 'undefined':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (depth >= MAX_JSON_DEPTH) return false;
      if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index += 1) {
          const item: unknown = value[index];
          if (item === undefined || !isStorableJson(item, depth + 1)) return false;
        }
        return true;
      }
      const prototype = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return false;
      const record = value as Record<string, unknown>;
      for (const key in record) {
        if (!Object.hasOwn(record, key)) continue;
        if (!isGoodKey(key) || !isStorableJson(record[key], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

// Keys already found good: the few that every message repeats (`type`, `text`, `state`, …) are
// checked once. Bounded (256 keys of at most 64 characters), so keys from data cannot grow it.
const goodKeys = new Set<string>();

function isGoodKey(key: string): boolean {
  if (goodKeys.has(key)) return true;
  if (key.includes('\u0000') || !isWellFormed(key)) return false;
  if (goodKeys.size < 256 && key.length <= 64) goodKeys.add(key);
  return true;
}

/** The state of one walk: where it started, the keys down to the current value, what it found. */
interface JsonWalk {
  readonly field: string;
  readonly keys: Array<string | number>;
  readonly issues: ValidationIssue[];
  readonly ancestors: object[];
}

function walkPath(walk: JsonWalk, extra?: string | number): string {
  let path = walk.field;
  const keys = extra === undefined ? walk.keys : [...walk.keys, extra];
  for (const key of keys) path = typeof key === 'number' ? `${path}[${key}]` : `${path}.${key}`;
  return path;
}

function report(walk: JsonWalk, message: string, extra?: string | number): void {
  walk.issues.push({ path: walkPath(walk, extra), message });
}

function collectFrom(value: unknown, walk: JsonWalk): void {
  if (walk.issues.length >= 50) return;
  switch (typeof value) {
    case 'string': {
      const problem = stringProblem(value);
      if (problem !== undefined) report(walk, problem);
      return;
    }
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) report(walk, `${value} is not a finite number`);
      return;
    case 'undefined':
      return;
    case 'object': {
      if (value === null) return;
      const ancestors = walk.ancestors;
      if (ancestors.includes(value)) {
        report(walk, 'cycle (the value contains itself)');
        return;
      }
      if (ancestors.length >= MAX_JSON_DEPTH) {
        report(walk, `nested deeper than ${MAX_JSON_DEPTH} levels`);
        return;
      }
      const isArray = Array.isArray(value);
      const prototype = Object.getPrototypeOf(value);
      if (!isArray && prototype !== Object.prototype && prototype !== null) {
        const name = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object';
        report(walk, `${name} instance is not plain JSON`);
        return;
      }
      ancestors.push(value);
      const keys = walk.keys;
      if (isArray) {
        const items = value as unknown[];
        for (let index = 0; index < items.length; index += 1) {
          const item = items[index];
          if (item === undefined) {
            // A hole of a sparse array is no undefined item: JSON writes it as null.
            if (index in items) report(walk, 'undefined in an array', index);
            continue;
          }
          keys.push(index);
          collectFrom(item, walk);
          keys.pop();
        }
      } else {
        const record = value as Record<string, unknown>;
        // for…in over own keys: Object.keys's order without allocating its array.
        for (const key in record) {
          if (!Object.hasOwn(record, key)) continue;
          if (key.includes('\u0000') || !isWellFormed(key)) {
            report(walk, 'a key contains the NUL character or a lone surrogate');
          }
          keys.push(key);
          collectFrom(record[key], walk);
          keys.pop();
        }
      }
      ancestors.pop();
      return;
    }
    default:
      report(walk, `${typeof value} is not JSON`);
  }
}

/** A commit whose message payloads are already serialized, as stores write them. */
export interface PreparedCommitMessage {
  /** The node id. */
  readonly id: string;
  /**
   * The message's own id (`message.id`): the node id, unless the store declares
   * `capabilities.messageVersions` and the writer gave another one.
   */
  readonly messageId: string;
  /** The message's role. */
  readonly role: string;
  /** `JSON.stringify(message)`, checked: what the store keeps. */
  readonly json: string;
  /**
   * The message object as the caller passed it, checked: the same content as `json` while the
   * store's method has not yet returned to the event loop. Read it only synchronously, in the call
   * that received it (to index its text with the write, say, without parsing `json` again), never
   * after an `await`: the caller may change its object afterwards, and `json` is what is stored.
   */
  readonly message: StoredMessage;
  /**
   * `JSON.stringify(engineRecord)`, checked, or null when the entry carries no engine record (a
   * new node then has none; a node replaced in place keeps the one it had). Only a store that declares
   * `capabilities.engineRecords` gets one; for any other, an entry with a record is refused.
   */
  readonly engineRecordJson: string | null;
  /**
   * The entry asks for a new version of its message (`CommitMessage.newVersion`): `id` is the
   * message id, and the store writes a new node under the id it allocates inside the write
   * (`assignVersionIds`). Only a store that declares `capabilities.messageVersions` gets one.
   */
  readonly newVersion: boolean;
}

/** Options of {@link prepareCommit} and {@link prepareAppend}. */
export interface PrepareMessagesOptions {
  /**
   * The store declares `capabilities.engineRecords`: an entry's `engineRecord` (a JSON object,
   * with the rules of a message) is checked and serialized. Otherwise an entry that carries one
   * is refused with `ValidationError`. @default false
   */
  readonly engineRecords?: boolean;
  /**
   * The store declares `capabilities.messageVersions`: a node id may differ from its
   * `message.id` (which must then be a valid id too). Otherwise they must be equal.
   * @default false
   */
  readonly messageVersions?: boolean;
}

/**
 * Checks a commit's input and serializes its messages: chat id, branch name, expected head,
 * at least one message, each with an id equal to `message.id`, a role and a parts array, no id
 * twice, and JSON-safe content; an `engineRecord` only when `options.engineRecords` (a JSON
 * object, with the same rules). Throws one `ValidationError` listing every problem.
 */
export function prepareCommit(
  input: CommitInput,
  options?: PrepareMessagesOptions,
): PreparedCommitMessage[] {
  const method = 'commit(input)';
  assertInputObject(method, input);
  assertIdentifier(method, 'chatId', input.chatId);
  assertIdentifier(method, 'branch', input.branch);
  if (input.expectedHeadId !== null)
    assertIdentifier(method, 'expectedHeadId', input.expectedHeadId);
  const { fork } = input;
  if (fork !== undefined) {
    if (options?.messageVersions !== true) {
      throw new ValidationError(
        `${method}: fork is only for a store that keeps message versions (capabilities.messageVersions is not declared); fork with forkBranch, then commit. Nothing was written.`,
        { issues: [{ path: 'fork', message: 'this store does not declare messageVersions' }] },
      );
    }
    if (typeof fork !== 'object' || fork === null || Array.isArray(fork)) {
      throw new ValidationError(
        `${method}: fork must be an object { from, activate? } or omitted.`,
        {
          issues: [{ path: 'fork', message: 'expected an object' }],
        },
      );
    }
    assertIdentifier(method, 'fork.from', fork.from);
    assertOptionalBoolean(method, 'fork.activate', fork.activate);
  }
  return prepareMessages(method, input.messages, options);
}

/** Checks an `append` input and serializes its messages, with the rules of {@link prepareCommit}. */
export function prepareAppend(
  input: AppendInput,
  options?: PrepareMessagesOptions,
): PreparedCommitMessage[] {
  const method = 'append(input)';
  assertInputObject(method, input);
  assertIdentifier(method, 'chatId', input.chatId);
  assertIdentifier(method, 'branch', input.branch);
  return prepareMessages(method, input.messages, options);
}

/**
 * Checks a `saveContext` input and serializes the lane: chat id, an array of JSON-storable
 * values, and `expectedRevision` (omitted, or a non-negative integer). Returns the JSON text of
 * the array.
 */
export function prepareSaveContext(input: SaveContextInput): string {
  const method = 'saveContext(input)';
  assertInputObject(method, input);
  assertIdentifier(method, 'chatId', input.chatId);
  if (!Array.isArray(input.fragments)) {
    throw new ValidationError(`${method}: fragments must be an array of JSON values.`, {
      issues: [{ path: 'fragments', message: 'expected an array' }],
    });
  }
  const revision = input.expectedRevision;
  if (revision !== undefined && (!Number.isSafeInteger(revision) || revision < 0)) {
    throw new ValidationError(
      `${method}: expectedRevision must be a non-negative integer or omitted, received ${String(revision)}.`,
      { issues: [{ path: 'expectedRevision', message: 'expected a non-negative integer' }] },
    );
  }
  return toJsonText(method, 'fragments', input.fragments);
}

/** Checks a `forkBranch` input: chat id, the name to fork from, the head (or null), `activate`. */
export function assertForkBranchInput(input: ForkBranchInput): void {
  const method = 'forkBranch(input)';
  assertInputObject(method, input);
  assertIdentifier(method, 'chatId', input.chatId);
  assertIdentifier(method, 'from', input.from);
  if (input.headMessageId !== null) assertIdentifier(method, 'headMessageId', input.headMessageId);
  assertOptionalBoolean(method, 'activate', input.activate);
}

/**
 * The name a `forkBranch` creates: `nextBranchName(from, existing)`, checked like any branch name.
 * Call it where the store reads the chat's branch names, inside the write that creates the fork.
 * Throws a `ValidationError` naming `from` when the name would be too long for an identifier (a
 * `from` near the limit has no room for its `-vN` suffix).
 */
export function forkBranchName(from: string, existing: Iterable<string>): string {
  const method = 'forkBranch(input)';
  const name = nextBranchName(from, existing);
  const problem = identifierProblem(name);
  if (problem !== undefined) {
    throw new ValidationError(
      `${method}: the next fork of "${from}" would be named "${name}", which is not a valid branch name (${problem}). Nothing was created; fork from a shorter name or use createBranch with a name of your own.`,
      {
        issues: [{ path: 'from', message: 'the derived branch name is not a valid identifier' }],
      },
    );
  }
  return name;
}

function prepareMessages(
  method: string,
  messages: unknown,
  options: PrepareMessagesOptions | undefined,
): PreparedCommitMessage[] {
  const engineRecords = options?.engineRecords === true;
  const messageVersions = options?.messageVersions === true;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new ValidationError(`${method}: messages must be a non-empty array.`, {
      issues: [{ path: 'messages', message: 'expected a non-empty array' }],
    });
  }
  const issues: ValidationIssue[] = [];
  const prepared: PreparedCommitMessage[] = [];
  // One walk for every message, its path starting at `messages[i].message`; paths and the id
  // set are built only when needed (a turn is a message or two, checked on every save).
  const walk: JsonWalk = { field: 'messages', keys: [], issues, ancestors: [] };
  const seen = messages.length > 16 ? new Set<string>() : undefined;
  for (let index = 0; index < messages.length; index += 1) {
    const entry: unknown = messages[index];
    if (typeof entry !== 'object' || entry === null) {
      issues.push({ path: at(index, ''), message: 'expected { id, message }' });
      continue;
    }
    const { id, message, engineRecord, newVersion } = entry as {
      id: unknown;
      message: unknown;
      engineRecord?: unknown;
      newVersion?: unknown;
    };
    const duplicate = typeof id === 'string' && seenBefore(messages, index, id, seen);
    const idProblem = identifierProblem(id);
    if (idProblem) issues.push({ path: at(index, '.id'), message: idProblem });
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      issues.push({ path: at(index, '.message'), message: 'expected a message object' });
      continue;
    }
    const record = message as Record<string, unknown>;
    if (messageVersions) {
      // A version of a message: its node id may differ, but the message id is an id all the same.
      const messageIdProblem = record.id === id ? undefined : identifierProblem(record.id);
      if (messageIdProblem)
        issues.push({ path: at(index, '.message.id'), message: messageIdProblem });
    } else if (record.id !== id)
      issues.push({
        path: at(index, '.message.id'),
        message: `must equal the node id ${JSON.stringify(id)} (this store does not declare capabilities.messageVersions)`,
      });
    if (newVersion !== undefined)
      newVersionIssue(index, newVersion, id, record.id, options, issues);
    if (typeof record.role !== 'string' || record.role === '')
      issues.push({ path: at(index, '.message.role'), message: 'expected a non-empty string' });
    if (!Array.isArray(record.parts))
      issues.push({ path: at(index, '.message.parts'), message: 'expected an array' });
    if (duplicate) {
      issues.push({
        path: at(index, '.id'),
        message: `id ${JSON.stringify(id)} appears twice in one commit`,
      });
    }
    const before = issues.length;
    if (!isStorableJson(message, 0)) {
      walk.keys.push(index, 'message');
      collectFrom(message, walk);
      walk.keys.length = 0;
      walk.ancestors.length = 0;
    }
    if (engineRecord !== undefined) {
      if (!engineRecords) {
        issues.push({
          path: at(index, '.engineRecord'),
          message:
            'this store does not keep engine records (capabilities.engineRecords is not declared)',
        });
      } else if (
        typeof engineRecord !== 'object' ||
        engineRecord === null ||
        Array.isArray(engineRecord)
      ) {
        issues.push({ path: at(index, '.engineRecord'), message: 'expected a JSON object' });
      } else {
        if (!isStorableJson(engineRecord, 0)) {
          walk.keys.push(index, 'engineRecord');
          collectFrom(engineRecord, walk);
          walk.keys.length = 0;
          walk.ancestors.length = 0;
        }
      }
    }
    if (issues.length === before && typeof id === 'string') {
      prepared.push({
        id,
        messageId: record.id as string,
        role: String(record.role),
        json: JSON.stringify(message),
        message: message as StoredMessage,
        engineRecordJson: engineRecord === undefined ? null : JSON.stringify(engineRecord),
        newVersion: newVersion === true,
      });
    }
  }
  if (issues.length > 0) {
    const shown = issues.slice(0, 5).map((issue) => `${issue.path}: ${issue.message}`);
    const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : '';
    throw new ValidationError(`${method}: ${shown.join('; ')}${more}.`, { issues });
  }
  return prepared;
}

/** The path of a message input's field: `messages[2].message.role`. */
function at(index: number, suffix: string): string {
  return `messages[${index}]${suffix}`;
}

/**
 * Whether an entry before `index` has the string id `id`: a scan for a short list, `seen` (the
 * ids so far, which this adds to) for a long one.
 */
function seenBefore(
  messages: readonly unknown[],
  index: number,
  id: string,
  seen: Set<string> | undefined,
): boolean {
  if (seen !== undefined) {
    // One hash lookup: adding an id already there leaves the size as it was.
    const size = seen.size;
    seen.add(id);
    return seen.size === size;
  }
  for (let earlier = 0; earlier < index; earlier += 1) {
    const entry = messages[earlier];
    if (typeof entry === 'object' && entry !== null && (entry as { id?: unknown }).id === id)
      return true;
  }
  return false;
}

/** The checked page size and decoded cursor of a `listChats` call. */
export interface ChatListQuery {
  /** The owner. */
  readonly userId: string;
  /** Page size, within 1…{@link CHAT_PAGE_SIZE.max}. */
  readonly limit: number;
  /** Position after which the page starts (exclusive), or null for the first page. */
  readonly after: { readonly updatedAt: number; readonly id: string } | null;
}

/**
 * Checks a `listChats` input and decodes its cursor. Chats are listed by `updatedAt` descending,
 * then `id` ascending; the cursor is the last item's position, `"<updatedAt>:<id>"`.
 */
export function prepareChatList(input: ListChatsInput): ChatListQuery {
  const method = 'listChats(input)';
  assertIdentifier(method, 'userId', input?.userId);
  const limit = input.limit ?? CHAT_PAGE_SIZE.default;
  if (!Number.isInteger(limit) || limit < 1 || limit > CHAT_PAGE_SIZE.max) {
    throw new ValidationError(
      `${method}: limit must be an integer from 1 to ${CHAT_PAGE_SIZE.max}, received ${String(limit)}.`,
      {
        issues: [{ path: 'limit', message: `expected an integer from 1 to ${CHAT_PAGE_SIZE.max}` }],
      },
    );
  }
  if (input.cursor === undefined) return { userId: input.userId, limit, after: null };
  const cursor = input.cursor;
  const separator = typeof cursor === 'string' ? cursor.indexOf(':') : -1;
  const updatedAt = separator > 0 ? Number(cursor.slice(0, separator)) : Number.NaN;
  if (!Number.isSafeInteger(updatedAt) || separator === cursor.length - 1) {
    throw new ValidationError(
      `${method}: cursor ${JSON.stringify(cursor)} is not a cursor this store returned.`,
      {
        issues: [{ path: 'cursor', message: 'malformed cursor' }],
      },
    );
  }
  return { userId: input.userId, limit, after: { updatedAt, id: cursor.slice(separator + 1) } };
}

/** The cursor that continues a chat listing after `chat`. */
export function chatCursor(chat: { readonly updatedAt: number; readonly id: string }): string {
  return `${chat.updatedAt}:${chat.id}`;
}

/** The default and largest `limit` of `findMessageNodes`. */
export const FIND_MESSAGE_NODES_LIMITS: { readonly default: number; readonly max: number } =
  Object.freeze({ default: 20, max: 100 });

/** Checks a `findMessageNodes` limit: omitted, or an integer from 1 to 100. Returns it, defaulted. */
export function findMessageNodesLimit(limit: unknown): number {
  if (limit === undefined) return FIND_MESSAGE_NODES_LIMITS.default;
  if (
    typeof limit !== 'number' ||
    !Number.isInteger(limit) ||
    limit < 1 ||
    limit > FIND_MESSAGE_NODES_LIMITS.max
  ) {
    throw new ValidationError(
      `findMessageNodes(input): limit must be an integer from 1 to ${FIND_MESSAGE_NODES_LIMITS.max} or omitted, received ${String(limit)}.`,
      {
        issues: [
          {
            path: 'limit',
            message: `expected an integer from 1 to ${FIND_MESSAGE_NODES_LIMITS.max}`,
          },
        ],
      },
    );
  }
  return limit;
}

/**
 * Checks a `getChain` limit: undefined (no limit) or a positive integer.
 */
export function assertChainLimit(limit: unknown): asserts limit is number | undefined {
  if (limit === undefined) return;
  if (!Number.isSafeInteger(limit) || (limit as number) < 1) {
    throw new ValidationError(
      `getChain(input): limit must be a positive safe integer, received ${String(limit)}.`,
      {
        issues: [{ path: 'limit', message: 'expected a positive integer' }],
      },
    );
  }
}

/** Shallow-merges metadata patches into existing metadata (the rule of `updateChat`). */
export function mergeMetadata(current: JsonObject, patch: JsonObject | undefined): JsonObject {
  return patch === undefined ? current : { ...current, ...patch };
}

/** Checks that a method's input is an object (before its fields are read). */
export function assertInputObject(method: string, input: unknown): asserts input is object {
  if (typeof input !== 'object' || input === null) {
    throw new ValidationError(`${method}: input must be an object.`, {
      issues: [{ path: 'input', message: 'expected an object' }],
    });
  }
}

/** Checks an optional boolean flag (`activate`, `replace`). */
export function assertOptionalBoolean(
  method: string,
  field: string,
  value: unknown,
): asserts value is boolean | undefined {
  if (value !== undefined && typeof value !== 'boolean') {
    const received = value === null ? 'null' : typeof value;
    throw new ValidationError(`${method}: ${field} must be a boolean, received ${received}.`, {
      issues: [{ path: field, message: 'expected a boolean' }],
    });
  }
}

/**
 * Checks a chat title: undefined (left as is), a string without NUL or lone surrogates, or —
 * where `nullable`, as in `updateChat`, which clears the title with it — null.
 */
export function assertTitle(
  method: string,
  title: unknown,
  nullable: boolean,
): asserts title is string | null | undefined {
  if (title === undefined || (nullable && title === null)) return;
  const expected = nullable ? 'a string or null' : 'a string';
  const problem =
    typeof title !== 'string'
      ? `expected ${expected}, received ${title === null ? 'null' : typeof title}`
      : title.includes('\u0000')
        ? 'must not contain the NUL character'
        : loneSurrogate.test(title)
          ? 'must not contain a lone UTF-16 surrogate (not valid Unicode text)'
          : undefined;
  if (problem !== undefined) {
    throw new ValidationError(`${method}: title ${problem}.`, {
      issues: [{ path: 'title', message: problem }],
    });
  }
}
