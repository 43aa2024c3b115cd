import { ValidationError } from '../../errors/errors';
import type { SearchHit, SearchMessagesInput } from '../branch-extensions';
import type { StoredMessage } from '../records';
import { assertIdentifier, assertInputObject } from './store-input';

// The shared half of `searchMessages`: what a query means (its words), what text of a message is
// searched, the snippet, the cursor and the page size, so every store agrees on all of them and
// keeps only the matching and ranking, which is what its engine does best.

/** The default and the largest page size of `searchMessages`. */
export const SEARCH_PAGE_SIZE: { readonly default: number; readonly max: number } = {
  default: 20,
  max: 100,
};

/** The longest query accepted, in characters, and the most words kept from it. */
export const SEARCH_QUERY_LIMITS: { readonly characters: number; readonly words: number } = {
  characters: 1_000,
  words: 32,
};

// A word: letters, digits and combining marks (so "café" written with a combining accent stays one word).
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
// Upper-case words that full-text engines read as operators: dropped from queries, never searched.
const OPERATOR_WORDS = new Set(['AND', 'OR', 'NOT', 'NEAR']);

/** The words of a text, lower-cased, in order (repeats kept): how every store tokenizes. */
export function searchTokens(text: string): string[] {
  return (text.normalize('NFC').match(WORD) ?? []).map((word) => word.toLowerCase());
}

/**
 * The words of a query: its {@link searchTokens} without the operator words (`AND`, `OR`, `NOT`,
 * `NEAR` written in capitals), each once, at most {@link SEARCH_QUERY_LIMITS}.words of them.
 */
export function searchTerms(query: string): string[] {
  const terms = new Set<string>();
  for (const word of query.normalize('NFC').match(WORD) ?? []) {
    if (OPERATOR_WORDS.has(word)) continue;
    terms.add(word.toLowerCase());
    if (terms.size === SEARCH_QUERY_LIMITS.words) break;
  }
  return [...terms];
}

/** The searchable text of a message: its `text` and `reasoning` parts, one per line. */
export function messageSearchText(message: StoredMessage): string {
  const texts: string[] = [];
  for (const part of message.parts) {
    if (typeof part !== 'object' || part === null) continue;
    const { type, text } = part as { type?: unknown; text?: unknown };
    if ((type === 'text' || type === 'reasoning') && typeof text === 'string') texts.push(text);
  }
  return texts.join('\n');
}

const SNIPPET_BEFORE = 60;
const SNIPPET_LENGTH = 160;

/**
 * An excerpt of `text` around the first of `terms` that occurs as a word (case-insensitively):
 * about {@link SNIPPET_BEFORE} characters before it, {@link SNIPPET_LENGTH} in all, whitespace
 * collapsed, with `…` where text was cut. The start of the text when no term is found.
 */
export function searchSnippet(text: string, terms: readonly string[]): string {
  const flat = text.normalize('NFC').replace(/\s+/gu, ' ').trim();
  let first = -1;
  for (const match of flat.matchAll(WORD)) {
    if (terms.includes(match[0].toLowerCase())) {
      first = match.index;
      break;
    }
  }
  if (flat.length <= SNIPPET_LENGTH) return flat;
  let start = first <= SNIPPET_BEFORE ? 0 : first - SNIPPET_BEFORE;
  // Never start or end inside a surrogate pair.
  if (/[\uDC00-\uDFFF]/.test(flat.charAt(start))) start -= 1;
  let end = Math.min(flat.length, start + SNIPPET_LENGTH);
  if (/[\uD800-\uDBFF]/.test(flat.charAt(end - 1))) end -= 1;
  return `${start > 0 ? '…' : ''}${flat.slice(start, end).trim()}${end < flat.length ? '…' : ''}`;
}

/** `searchMessages` input, checked: the words to find, the scope and the page. */
export interface PreparedSearch {
  /** Whose chats. */
  readonly userId: string;
  /** One chat, or undefined for every chat of the user. */
  readonly chatId: string | undefined;
  /** One branch of `chatId` (its chain only), or undefined. */
  readonly branch: string | undefined;
  /** The query's words: lower-cased, each once, at least one. A message matches when it holds all. */
  readonly terms: readonly string[];
  /** Hits per page (the driver returns up to `limit + 1`, so the kit knows whether more follow). */
  readonly limit: number;
  /** How many hits, in ranking order, come before this page. */
  readonly offset: number;
}

/** One message a driver found: the kit adds the role and the snippet, and cuts the page. */
export interface SearchMatch {
  /** The chat. */
  readonly chatId: string;
  /** The node id. */
  readonly messageId: string;
  /** The node's sequence. */
  readonly sequence: number;
  /** Higher is better. */
  readonly score: number;
  /** The stored message. */
  readonly message: StoredMessage;
  /** The branches whose chain holds the node, oldest first. */
  readonly branches: readonly string[];
}

function searchProblem(method: string, field: string, problem: string): ValidationError {
  return new ValidationError(`${method}: ${field} ${problem}.`, {
    issues: [{ path: field, message: problem }],
  });
}

// A cursor is `<offset>.<fingerprint of the search>`: one search's cursor is refused by another.
function fingerprint(search: Omit<PreparedSearch, 'limit' | 'offset'>): string {
  const text = JSON.stringify([search.userId, search.chatId, search.branch, search.terms]);
  // FNV-1a, 32 bits: enough to tell searches apart, not a secret.
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36);
}

/** The cursor of the page after `search`'s, given how many hits it returned. */
export function searchCursor(search: PreparedSearch, returned: number): string {
  return `${search.offset + returned}.${fingerprint(search)}`;
}

/**
 * Checks `searchMessages` input: ids, a query with at least one word (an empty query or one of
 * operators and punctuation only is refused), `branch` only with `chatId`, a page size from 1 to
 * {@link SEARCH_PAGE_SIZE}.max, and a cursor of this same search.
 */
export function prepareSearch(input: SearchMessagesInput): PreparedSearch {
  const method = 'searchMessages(input)';
  assertInputObject(method, input);
  const { userId, query, chatId, branch, limit, cursor } = input;
  assertIdentifier(method, 'userId', userId);
  if (chatId !== undefined) assertIdentifier(method, 'chatId', chatId);
  if (branch !== undefined) {
    assertIdentifier(method, 'branch', branch);
    if (chatId === undefined)
      throw searchProblem(method, 'branch', 'needs chatId (a branch name is scoped to its chat)');
  }
  if (typeof query !== 'string')
    throw searchProblem(method, 'query', `must be a string, received ${typeof query}`);
  if (query.trim() === '')
    throw searchProblem(method, 'query', 'is empty: give at least one word to search for');
  if (query.length > SEARCH_QUERY_LIMITS.characters)
    throw searchProblem(
      method,
      'query',
      `is ${query.length} characters long, more than ${SEARCH_QUERY_LIMITS.characters}`,
    );
  const terms = searchTerms(query);
  if (terms.length === 0)
    throw searchProblem(
      method,
      'query',
      `has no word to search for ("${query}" is only operators or punctuation); give at least one word`,
    );
  if (
    limit !== undefined &&
    (typeof limit !== 'number' ||
      !Number.isInteger(limit) ||
      limit < 1 ||
      limit > SEARCH_PAGE_SIZE.max)
  ) {
    throw searchProblem(
      method,
      'limit',
      `must be an integer from 1 to ${SEARCH_PAGE_SIZE.max}, received ${String(limit)}`,
    );
  }
  const scope = { userId, chatId, branch, terms };
  let offset = 0;
  if (cursor !== undefined) {
    const match = typeof cursor === 'string' ? /^(\d{1,15})\.([0-9a-z]+)$/.exec(cursor) : null;
    if (match === null || match[2] !== fingerprint(scope)) {
      throw searchProblem(
        method,
        'cursor',
        'is not a nextCursor of this search (same user, query, chat and branch)',
      );
    }
    offset = Number(match[1]);
  }
  return { ...scope, limit: limit ?? SEARCH_PAGE_SIZE.default, offset };
}

/** A driver's match as the contract returns it. */
export function searchHit(match: SearchMatch, terms: readonly string[]): SearchHit {
  return {
    chatId: match.chatId,
    messageId: match.messageId,
    role: match.message.role,
    sequence: match.sequence,
    score: match.score,
    snippet: searchSnippet(messageSearchText(match.message), terms),
    branches: match.branches,
    message: match.message,
  };
}
