import { ValidationError } from '../../errors/errors';
import type { JsonObject } from '../../json';
import { assertIdentifier } from '../../rules/identifiers';
import { CHAT_PAGE_SIZE } from '../../rules/limits';
import { assertJsonObject, toJsonText } from '../../rules/storable-json';
import type {
  ListChatsInput,
  OpenChatInput,
  SaveContextInput,
  UpdateChatInput,
} from '../context-store';
import { assertInputObject, assertTitle, checkBytes, type StoreInputOptions } from './input-checks';

// The chat's own inputs: opening, updating, listing, a chat id alone, and the context lane.
// Every prepare function reads each field once into a fresh object, so a getter or a caller
// changing its input while an asynchronous driver works cannot change what was checked.

/** `openChat` input, checked. */
export interface PreparedOpenChat {
  /** The chat id. */
  readonly chatId: string;
  /** The user opening it (the owner of a new chat). */
  readonly userId: string;
  /** The title of a new chat (null when none was given). An existing chat's title is kept. */
  readonly title: string | null;
  /**
   * The metadata given, as a fresh copy the driver may keep, or undefined when none was given.
   * For an existing chat, merge it with `mergeMetadata(current, metadata)`; when undefined, an
   * existing chat is loaded without any write.
   */
  readonly metadata: JsonObject | undefined;
  /** The JSON text of a new chat's metadata (`'{}'` when none was given). */
  readonly metadataJson: string;
}

/** `updateChat` input, checked. */
export interface PreparedUpdateChat {
  /** The chat id. */
  readonly chatId: string;
  /** The new title, null to clear it, or undefined to leave it as is. */
  readonly title: string | null | undefined;
  /** Keys to merge shallowly into the metadata (a fresh copy), or undefined to leave it. */
  readonly metadata: JsonObject | undefined;
}

/** `listChats` input, checked: the page size and the decoded cursor. */
export interface ChatListQuery {
  /** The owner. */
  readonly userId: string;
  /** Page size, within 1…{@link CHAT_PAGE_SIZE.max}. */
  readonly limit: number;
  /** Position after which the page starts (exclusive), or null for the first page. */
  readonly after: { readonly updatedAt: number; readonly id: string } | null;
}

/** `saveContext` input, checked and serialized. */
export interface PreparedSaveContext {
  /** The chat id. */
  readonly chatId: string;
  /** The JSON text of the whole lane (an array); store it as is, byte for byte. */
  readonly fragmentsJson: string;
  /** The revision the caller read, or undefined for last-writer-wins. */
  readonly expectedRevision: number | undefined;
}

/** Checks metadata and returns its JSON text (one walk of the value). */
function metadataText(method: string, metadata: unknown, limit: number | undefined): string {
  assertJsonObject(method, 'metadata', metadata);
  const text = JSON.stringify(metadata);
  checkBytes(method, 'metadata', text, limit);
  return text;
}

/** Checks an `openChat` input: ids, metadata (a JSON object), title. */
export function prepareOpenChat(
  input: OpenChatInput,
  options: StoreInputOptions = {},
): PreparedOpenChat {
  const method = 'openChat(input)';
  assertInputObject(method, input);
  const { chatId, userId, metadata, title } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'userId', userId);
  const limit = options.maxJsonBytes;
  const text = metadata === undefined ? undefined : metadataText(method, metadata, limit);
  assertTitle(method, title, false);
  if (typeof title === 'string') checkBytes(method, 'title', title, limit);
  return {
    chatId,
    userId,
    title: title ?? null,
    metadata: text === undefined ? undefined : (JSON.parse(text) as JsonObject),
    metadataJson: text ?? '{}',
  };
}

/** Checks an `updateChat` input: the chat id, a title (null clears it), metadata to merge. */
export function prepareUpdateChat(
  input: UpdateChatInput,
  options: StoreInputOptions = {},
): PreparedUpdateChat {
  const method = 'updateChat(input)';
  assertInputObject(method, input);
  const { chatId, title, metadata } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertTitle(method, title, true);
  const limit = options.maxJsonBytes;
  if (typeof title === 'string') checkBytes(method, 'title', title, limit);
  const text = metadata === undefined ? undefined : metadataText(method, metadata, limit);
  return {
    chatId,
    title,
    metadata: text === undefined ? undefined : (JSON.parse(text) as JsonObject),
  };
}

/**
 * Checks a `listChats` input and decodes its cursor. Chats are listed by `updatedAt` descending,
 * then `id` ascending; the cursor is the last item's position, `"<updatedAt>:<id>"`
 * ({@link chatCursor}).
 */
export function prepareListChats(input: ListChatsInput): ChatListQuery {
  const method = 'listChats(input)';
  assertInputObject(method, input);
  const { userId, cursor } = input;
  const limit = input.limit ?? CHAT_PAGE_SIZE.default;
  assertIdentifier(method, 'userId', userId);
  if (!Number.isInteger(limit) || limit < 1 || limit > CHAT_PAGE_SIZE.max) {
    throw new ValidationError(
      `${method}: limit must be an integer from 1 to ${CHAT_PAGE_SIZE.max}, received ${String(limit)}.`,
      {
        issues: [{ path: 'limit', message: `expected an integer from 1 to ${CHAT_PAGE_SIZE.max}` }],
      },
    );
  }
  if (cursor === undefined) return { userId, limit, after: null };
  const separator = typeof cursor === 'string' ? cursor.indexOf(':') : -1;
  const updatedAt = separator > 0 ? Number(cursor.slice(0, separator)) : Number.NaN;
  if (!Number.isSafeInteger(updatedAt) || separator === cursor.length - 1) {
    throw new ValidationError(
      `${method}: cursor ${JSON.stringify(cursor)} is not a cursor this store returned.`,
      { issues: [{ path: 'cursor', message: 'malformed cursor' }] },
    );
  }
  return { userId, limit, after: { updatedAt, id: cursor.slice(separator + 1) } };
}

/** The cursor that continues a chat listing after `chat`. */
export function chatCursor(chat: { readonly updatedAt: number; readonly id: string }): string {
  return `${chat.updatedAt}:${chat.id}`;
}

/** Checks the argument of a method that takes a chat id alone (`getChat(chatId)`, …). */
export function prepareChatId(method: string, chatId: string): string {
  assertIdentifier(method, 'chatId', chatId);
  return chatId;
}

/**
 * Checks a `saveContext` input and serializes the lane: chat id, an array of JSON-storable
 * values within the size limit, and `expectedRevision` (omitted, or a non-negative integer).
 */
export function prepareSaveContext(
  input: SaveContextInput,
  options: StoreInputOptions = {},
): PreparedSaveContext {
  const method = 'saveContext(input)';
  assertInputObject(method, input);
  const { chatId, fragments, expectedRevision } = input;
  assertIdentifier(method, 'chatId', chatId);
  if (!Array.isArray(fragments)) {
    throw new ValidationError(`${method}: fragments must be an array of JSON values.`, {
      issues: [{ path: 'fragments', message: 'expected an array' }],
    });
  }
  if (
    expectedRevision !== undefined &&
    (!Number.isSafeInteger(expectedRevision) || expectedRevision < 0)
  ) {
    throw new ValidationError(
      `${method}: expectedRevision must be a non-negative integer or omitted, received ${String(expectedRevision)}.`,
      { issues: [{ path: 'expectedRevision', message: 'expected a non-negative integer' }] },
    );
  }
  const fragmentsJson = toJsonText(method, 'fragments', fragments);
  checkBytes(method, 'fragments', fragmentsJson, options.maxJsonBytes);
  return { chatId, fragmentsJson, expectedRevision };
}
