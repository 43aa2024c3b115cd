// What the server answers about a saved chat: the shapes of `GET …/:id/messages` and of the
// events, as the client reads them.
import type { UIMessage } from 'ai';

/** How a reply ended when it did not end well: stopped (`aborted`) or its process died. */
export type ReplyOutcome = 'aborted' | 'interrupted';

/** One version of a message: its node, and the newest node of the path through it. */
export interface VersionNode {
  /** The node of this version of the message. */
  readonly nodeId: string;
  /** The newest node under it: `?node=<leafNodeId>` opens the conversation of this version. */
  readonly leafNodeId: string;
}

/** The versions of a message that has more than one (an edit, a regenerated reply). */
export interface SavedVersions {
  /** The 0-based position, among `nodes`, of the version on the path read. */
  readonly index: number;
  /** Every version, oldest first. */
  readonly nodes: readonly VersionNode[];
}

/** A saved path of a chat: `GET …/:id/messages`. */
export interface SavedChat<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The messages of the path, oldest first. */
  readonly messages: UI_MESSAGE[];
  /** How each stopped or interrupted reply on the path ended, by message id. */
  readonly outcomes: Readonly<Record<string, ReplyOutcome>>;
  /**
   * The node of every message on the path, by message id: where a new message is placed
   * (`after`). Empty from a server that does not say.
   */
  readonly nodeIds: Readonly<Record<string, string>>;
  /** The versions of each message on the path that has more than one, by message id. */
  readonly versions: Readonly<Record<string, SavedVersions>>;
}

/** One event of `GET …/:id/events`. */
export interface ChatEvent {
  /** The chat's change revision: a number that only grows. */
  readonly version: number;
  /** The most recently started live reply's message id, or null when nothing is live. */
  readonly live: string | null;
  /** The id of the message the live reply answers, or null (nothing live, or not said). */
  readonly follows: string | null;
}

/** A record keyed by ids that come from the server: no prototype, so any id is a plain key. */
function recordOf<VALUE>(
  value: unknown,
  accept: (item: unknown) => item is VALUE,
): Record<string, VALUE> {
  const record: Record<string, VALUE> = Object.create(null);
  if (typeof value !== 'object' || value === null) return record;
  for (const [key, item] of Object.entries(value)) if (accept(item)) record[key] = item;
  return record;
}

const isOutcome = (value: unknown): value is ReplyOutcome =>
  value === 'aborted' || value === 'interrupted';

const isString = (value: unknown): value is string => typeof value === 'string';

function isVersions(value: unknown): value is SavedVersions {
  if (typeof value !== 'object' || value === null) return false;
  const { index, nodes } = value as Record<string, unknown>;
  return (
    typeof index === 'number' &&
    Array.isArray(nodes) &&
    index >= 0 &&
    index < nodes.length &&
    nodes.every(
      (node: unknown) =>
        typeof node === 'object' &&
        node !== null &&
        isString((node as Record<string, unknown>).nodeId) &&
        isString((node as Record<string, unknown>).leafNodeId),
    )
  );
}

/**
 * A `GET …/messages` answer read into a {@link SavedChat}; what is missing (an older server's
 * answer has no `nodeIds` or `versions`) reads as empty. Throws when `messages` is not a list.
 */
export function readSavedChat<UI_MESSAGE extends UIMessage>(
  answer: unknown,
): SavedChat<UI_MESSAGE> {
  const body = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<
    string,
    unknown
  >;
  if (!Array.isArray(body.messages)) {
    throw new TypeError(
      'The chat server answered GET …/messages without a messages list: is the api option the base path of createChatHandler?',
    );
  }
  return {
    messages: body.messages as UI_MESSAGE[],
    outcomes: recordOf(body.outcomes, isOutcome),
    nodeIds: recordOf(body.nodeIds, isString),
    versions: recordOf(body.versions, isVersions),
  };
}

/** The event in a server-sent event's data, or undefined when it is none. */
export function readChatEvent(data: string): ChatEvent | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { version, live, follows } = parsed as Record<string, unknown>;
  if (typeof version !== 'number' || !(live === null || typeof live === 'string')) return undefined;
  return { version, live, follows: typeof follows === 'string' ? follows : null };
}
