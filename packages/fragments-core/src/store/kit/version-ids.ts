import { identifierProblem } from '../../rules/identifiers';
import type { PreparedCommitMessage } from './commit-input';

// The node ids of message versions (`CommitMessage.newVersion`), allocated by the store inside
// the write that inserts them. One rule for every store, so the same writes give the same ids
// on each: `<messageId>~<n>`, n one above the newest version of the message, past every id
// taken. Reading the newest node of the message (the `findMessageNodes` index, limit 1) and
// probing candidates keeps the cost flat however many versions the message has.

const decimal = /^[1-9][0-9]*$/;
const shortForm = /^~([1-9][0-9]*)~/;

/**
 * The version number node `nodeId` gives message `messageId`: n for `<messageId>~<n>` and for
 * the short form `~<n>~…` (used when the long one is too long to be an id), 1 for any other id
 * (the message id itself).
 *
 * @example
 * versionNumber('q2', 'q2~3'); // 3
 * versionNumber('q2', 'q2'); // 1
 */
export function versionNumber(messageId: string, nodeId: string): number {
  if (nodeId === messageId) return 1;
  let digits: string | undefined;
  if (nodeId.length > messageId.length + 1 && nodeId.startsWith(`${messageId}~`)) {
    const rest = nodeId.slice(messageId.length + 1);
    if (decimal.test(rest)) digits = rest;
  }
  digits ??= shortForm.exec(nodeId)?.[1];
  const n = digits === undefined ? 1 : Number(digits);
  return Number.isSafeInteger(n) ? n : 1;
}

/**
 * The node id of version `n` of message `messageId`: `<messageId>~<n>`, or, when that is no
 * valid id (longer than an id may be), `~<n>~<tag>` with the 8 hex digits of the message id's
 * 32-bit FNV-1a hash (over its UTF-16 code units).
 *
 * @example
 * versionNodeId('q2', 2); // 'q2~2'
 */
export function versionNodeId(messageId: string, n: number): string {
  const readable = `${messageId}~${n}`;
  return identifierProblem(readable) === undefined ? readable : `~${n}~${fnv1a(messageId)}`;
}

/**
 * The node ids a new version of `messageId` may get, in the order a store tries them: version
 * n, n + 1, … from one above the version number of the message's newest node (`newestNodeId`,
 * its highest-sequence node; null when the chat has none, which starts at 2). Endless: a store
 * takes the first that no node of the chat and no other entry of the write has.
 *
 * @example
 * const candidates = versionNodeIdCandidates('q2', 'q2~3');
 * candidates.next().value; // 'q2~4'
 * candidates.next().value; // 'q2~5'
 */
export function* versionNodeIdCandidates(
  messageId: string,
  newestNodeId: string | null,
): Generator<string, never, undefined> {
  let n = (newestNodeId === null ? 1 : versionNumber(messageId, newestNodeId)) + 1;
  for (;;) {
    yield versionNodeId(messageId, n);
    n += 1;
  }
}

/** What {@link assignVersionIds} reads, inside the write's transaction. */
export interface VersionIdReads {
  /** The id of the newest (highest-sequence) node whose `message.id` is `messageId`, or null. */
  newestNodeOf(messageId: string): string | null;
  /** Whether the chat has a node with this id. */
  hasNode(nodeId: string): boolean;
}

/**
 * The write's messages with a node id for each entry that asks for a new version
 * (`newVersion`): the first of {@link versionNodeIdCandidates} that no node of the chat and no
 * other entry of the write has. Such an entry comes back as a plain new node (`newVersion`
 * false) under its id; the others come back as they were, and so does the array when no entry
 * asks (no read). Call it inside the write's transaction, under the lock that serializes the
 * chat's writers, before anything else reads the ids: concurrent writes then allocate distinct
 * ids and none fails for want of one.
 */
export function assignVersionIds(
  messages: readonly PreparedCommitMessage[],
  reads: VersionIdReads,
): readonly PreparedCommitMessage[] {
  if (!messages.some((message) => message.newVersion)) return messages;
  const taken = new Set(messages.map((message) => message.id));
  return messages.map((message) => {
    if (!message.newVersion) return message;
    const candidates = versionNodeIdCandidates(
      message.messageId,
      reads.newestNodeOf(message.messageId),
    );
    let id = candidates.next().value;
    while (taken.has(id) || reads.hasNode(id)) id = candidates.next().value;
    taken.add(id);
    return { ...message, id, newVersion: false };
  });
}

/** 32-bit FNV-1a over UTF-16 code units, as 8 hex digits. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}
