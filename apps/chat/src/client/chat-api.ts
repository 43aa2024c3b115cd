import type { ChatUIMessage } from '../server/tools';

/** How a reply ended when it did not end well: stopped (`aborted`) or its process died. */
export type ReplyOutcome = 'aborted' | 'interrupted';

/** A conversation as stored, with the outcome of each stopped or interrupted reply on it. */
export interface StoredConversation {
  readonly messages: ChatUIMessage[];
  readonly outcomes: Readonly<Record<string, ReplyOutcome>>;
}

/** What the server answers for a message's versions. */
export interface VersionsAnswer {
  versions: { nodeId: string; messageId: string; leafNodeId: string; message: ChatUIMessage }[];
}

/** One version of a message, as `GET …/versions/:messageId` lists it (oldest first). */
export type MessageVersionEntry = VersionsAnswer['versions'][number];

/**
 * Which of `versions` (oldest first) is the one `shown`, 0-based: the version the user picked
 * last (`pickedNodeId`), when it is one of them and has the shown message's id; else the newest
 * with the shown message's id and content (an edit keeps its message's id, so the content tells
 * two versions of a user message apart: their texts); else the newest with its id; else the newest.
 */
export function currentVersionIndex(
  versions: readonly MessageVersionEntry[],
  shown: ChatUIMessage,
  pickedNodeId?: string,
): number {
  const sameId = (version: MessageVersionEntry) => version.messageId === shown.id;
  const picked = versions.findIndex(
    (version) => version.nodeId === pickedNodeId && sameId(version),
  );
  if (picked !== -1) return picked;
  const content = textOfParts(shown);
  const sameContent = versions.findLastIndex(
    (version) => sameId(version) && textOfParts(version.message) === content,
  );
  if (sameContent !== -1) return sameContent;
  const sameIdIndex = versions.findLastIndex(sameId);
  return sameIdIndex !== -1 ? sameIdIndex : versions.length - 1;
}

/** The chat's route under the API's base: `/api/chat/<id><rest>`. */
export function chatRoute(apiBase: string, chatId: string, rest = ''): string {
  return `${apiBase}/api/chat/${encodeURIComponent(chatId)}${rest}`;
}

/**
 * The stored conversation (`GET …/messages`, with `query` such as `?leaf=<id>`), or null when
 * the chat or the leaf does not exist (404). Any other failure throws with the server's words.
 */
export async function loadConversation(
  apiBase: string,
  chatId: string,
  query = '',
): Promise<StoredConversation | null> {
  const response = await fetch(chatRoute(apiBase, chatId, `/messages${query}`));
  if (response.status === 404) return null;
  if (!response.ok) throw new Error(await response.text());
  const answer = (await response.json()) as Partial<StoredConversation>;
  return { messages: answer.messages ?? [], outcomes: answer.outcomes ?? {} };
}

/**
 * Asks the server to stop the chat's reply `replyId` (every live reply of the chat when
 * undefined), wherever it is generated. Resolves once the server answered: 200 once the reply is
 * saved, 204 when nothing was live (it had ended already). Any other answer throws.
 */
export async function requestStop(
  apiBase: string,
  chatId: string,
  replyId: string | undefined,
): Promise<void> {
  const response = await fetch(chatRoute(apiBase, chatId, '/stop'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: replyId === undefined ? '' : JSON.stringify({ messageId: replyId }),
  });
  if (response.status === 200 || response.status === 204) {
    await response.body?.cancel();
    return;
  }
  const text = await response.text();
  let error = text;
  try {
    error = (JSON.parse(text) as { error?: string }).error ?? text;
  } catch {
    // Not JSON: the text as it came.
  }
  throw new Error(`the server answered ${response.status}: ${error}`);
}

/**
 * What the page sends for every message the user writes, a new one or an edited version: the
 * text and its metadata (when it was sent). One place, so an edit is stored as a new message is.
 */
export function written(text: string): { text: string; metadata: { sentAt: number } } {
  return { text, metadata: { sentAt: Date.now() } };
}

/** The text of a message's text parts, joined (what a user message shows, and an edit starts from). */
export function textOfParts(message: ChatUIMessage): string {
  return message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
