import { ValidationError, type ValidationIssue } from '../../errors/errors';
import { assertIdentifier, identifierProblem } from '../../rules/identifiers';
import { describeValue } from '../../rules/paths';
import { addJsonIssues } from '../../rules/storable-json';
import type { AppendInput, CommitInput } from '../context-store';
import type { StoredMessage } from '../records';
import {
  assertInputObject,
  assertOptionalBoolean,
  type ByteLimit,
  checkBytes,
  issuesError,
  type StoreInputOptions,
} from './input-checks';
import {
  type PreparedCommitEndReply,
  type PreparedCommitStartReply,
  prepareCommitLive,
} from './live-reply-input';

// The writes of messages: `commit` and `append`. Every message is checked and serialized once
// (its JSON text is what the store keeps), and every problem of a batch is reported together.

/** One message of a commit or append, checked and serialized, as a driver writes it. */
export interface PreparedCommitMessage {
  /** The node id. */
  readonly id: string;
  /** The message's own id (`message.id`): the node id, unless the writer gave another one. */
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
   * new node then has none; a node replaced in place keeps the one it had).
   */
  readonly engineRecordJson: string | null;
  /**
   * The entry asks for a new version of its message (`CommitMessage.newVersion`): `id` is the
   * message id, and the store writes a new node under the id it allocates inside the write
   * (`assignVersionIds`).
   */
  readonly newVersion: boolean;
}

/** `commit` input, checked, with every message already serialized. */
export interface PreparedCommit {
  /** The chat id. */
  readonly chatId: string;
  /** The branch whose head moves (not read for a fork-commit). */
  readonly branch: string;
  /** The head the caller expects; anything else is a `HeadConflictError`. */
  readonly expectedHeadId: string | null;
  /**
   * At least one message, no id twice, each with its JSON text. Entries that ask for a new
   * version (`newVersion`) get their node ids from `assignVersionIds` inside the write's
   * transaction, under the lock that serializes the chat's writers; return each node under the
   * id it got.
   */
  readonly messages: readonly PreparedCommitMessage[];
  /**
   * A fork-commit: write on a new branch named `forkBranchName(fork.from, names)` whose head
   * starts at `expectedHeadId` (a node of the chat, or null), created in the same transaction as
   * the messages; return its name as `CommitResult.branch`. Undefined for a plain commit.
   */
  readonly fork: { readonly from: string; readonly activate: boolean } | undefined;
  /**
   * Only when the driver declares `capabilities.liveReplies`: start this live reply in the
   * commit's transaction (branch: the branch written; after: the head the commit leaves), or
   * throw `LiveReplyConflictError` having written nothing when the chat has a live reply of that
   * id (an ended one of that id is replaced, its chunks deleted). Absent for a plain commit.
   */
  readonly startReply?: PreparedCommitStartReply;
  /**
   * Only when the driver declares `capabilities.liveReplies`: end this live reply (mark it ended,
   * its chunks kept for the grace period, and delete the replies whose grace is over) in the
   * commit's transaction, or throw `LiveReplyLostError` having written nothing unless its owner
   * is `owner` (checked before the head). Absent for a plain commit.
   */
  readonly endReply?: PreparedCommitEndReply;
}

/** `append` input, checked, with every message already serialized. */
export interface PreparedAppend {
  /** The chat id. */
  readonly chatId: string;
  /** The branch to append to, at whatever head it has when the driver takes the write. */
  readonly branch: string;
  /** At least one message, no id twice, each with its JSON text (`newVersion` as in a commit). */
  readonly messages: readonly PreparedCommitMessage[];
}

/**
 * Checks a `commit` input and serializes its messages: chat id, branch, expected head, a fork
 * (`{ from, activate? }`), the messages (see {@link prepareAppend}), and a live reply started or
 * ended by the commit (only with `options.liveReplies`). Throws one `ValidationError` listing
 * every problem of the messages.
 */
export function prepareCommit(input: CommitInput, options: StoreInputOptions = {}): PreparedCommit {
  const method = 'commit(input)';
  assertInputObject(method, input);
  const { chatId, branch, expectedHeadId, messages, fork, startReply, endReply } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'branch', branch);
  if (expectedHeadId !== null) assertIdentifier(method, 'expectedHeadId', expectedHeadId);
  let forkCopy: PreparedCommit['fork'];
  if (fork !== undefined) {
    if (typeof fork !== 'object' || fork === null || Array.isArray(fork)) {
      throw new ValidationError(
        `${method}: fork must be an object { from, activate? } or omitted.`,
        {
          issues: [{ path: 'fork', message: 'expected an object' }],
        },
      );
    }
    // Read once: what was checked is what the driver gets.
    const { from, activate } = fork;
    assertIdentifier(method, 'fork.from', from);
    assertOptionalBoolean(method, 'fork.activate', activate);
    forkCopy = { from, activate: activate === true };
  }
  const prepared = prepareMessages(method, messages, options.maxJsonBytes);
  const live = prepareCommitLive(
    startReply,
    endReply,
    options.liveReplies === true,
    options.maxJsonBytes,
  );
  return {
    chatId,
    branch,
    expectedHeadId,
    messages: prepared,
    fork: forkCopy,
    ...(live.startReply === undefined ? {} : { startReply: live.startReply }),
    ...(live.endReply === undefined ? {} : { endReply: live.endReply }),
  };
}

/**
 * Checks an `append` input and serializes its messages: chat id, branch, and at least one
 * message, each `{ id, message, engineRecord?, newVersion? }` with a valid node id and message
 * id, a role and a parts array, no id twice, JSON-safe content and record, within the size limit.
 */
export function prepareAppend(input: AppendInput, options: StoreInputOptions = {}): PreparedAppend {
  const method = 'append(input)';
  assertInputObject(method, input);
  const { chatId, branch, messages } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'branch', branch);
  return { chatId, branch, messages: prepareMessages(method, messages, options.maxJsonBytes) };
}

function prepareMessages(
  method: string,
  messages: unknown,
  limit: ByteLimit,
): PreparedCommitMessage[] {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new ValidationError(`${method}: messages must be a non-empty array.`, {
      issues: [{ path: 'messages', message: 'expected a non-empty array' }],
    });
  }
  const issues: ValidationIssue[] = [];
  const prepared: PreparedCommitMessage[] = [];
  // Paths and the id set are built only when needed (a turn is a message or two, checked on
  // every save).
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
    // A version of a message: its node id may differ, but the message id is an id all the same.
    const messageIdProblem = record.id === id ? undefined : identifierProblem(record.id);
    if (messageIdProblem)
      issues.push({ path: at(index, '.message.id'), message: messageIdProblem });
    if (newVersion !== undefined) newVersionIssue(index, newVersion, id, record.id, issues);
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
    addJsonIssues(message, issues, () => at(index, '.message'));
    if (engineRecord !== undefined) {
      if (typeof engineRecord !== 'object' || engineRecord === null || Array.isArray(engineRecord))
        issues.push({ path: at(index, '.engineRecord'), message: 'expected a JSON object' });
      else addJsonIssues(engineRecord, issues, () => at(index, '.engineRecord'));
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
  if (issues.length > 0) throw issuesError(method, issues);
  prepared.forEach((entry, index) => {
    checkBytes(method, at(index, '.message'), entry.json, limit);
    if (entry.engineRecordJson !== null)
      checkBytes(method, at(index, '.engineRecord'), entry.engineRecordJson, limit);
  });
  return prepared;
}

/**
 * Adds the problem of entry `index`'s `newVersion` to `issues`, if it has one: not a boolean, or
 * a node id other than the message id (the store allocates the node id; `id` names the message).
 */
function newVersionIssue(
  index: number,
  newVersion: unknown,
  id: unknown,
  messageId: unknown,
  issues: ValidationIssue[],
): void {
  if (typeof newVersion !== 'boolean')
    issues.push({
      path: at(index, '.newVersion'),
      message: `expected a boolean, received ${describeValue(newVersion)}`,
    });
  else if (newVersion && id !== messageId)
    issues.push({
      path: at(index, '.id'),
      message: `must equal message.id ${JSON.stringify(messageId)} for a new version (the store allocates the node id)`,
    });
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
