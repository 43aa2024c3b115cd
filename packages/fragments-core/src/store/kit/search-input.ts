import { ValidationError } from '../../errors/errors';
import { assertIdentifier } from '../../rules/identifiers';
import type { StoredMessage } from '../records';
import type { SearchHit, SearchMessagesInput } from '../search';
import { assertInputObject } from './input-checks';

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

// The search rule, one for every store (stated in `SearchMessagesInput.query`): a text is folded
// (Unicode NFKD, combining marks removed, lower-cased), and its words are the maximal runs of
// letters and digits. So `jane.doe@example.com` is `jane doe example com`, `10.5` is `10 5`,
// `İstanbul` is `istanbul` and `café` is `cafe`. Stores index exactly these tokens (never their
// database's own parser), so all of them find the same messages for the same query.
const WORD = /[\p{L}\p{N}]+/gu;
const MARKS = /\p{M}+/gu;
// Upper-case words that full-text engines read as operators: dropped from queries, never searched.
const OPERATOR_WORDS = new Set(['AND', 'OR', 'NOT', 'NEAR']);

function fold(text: string): string {
  return text.normalize('NFKD').replace(MARKS, '');
}

/**
 * The words of a text under the search rule, in order (repeats kept): the text in Unicode NFKD
 * with combining marks removed, lower-cased, cut into maximal runs of letters and digits
 * (`\p{L}`, `\p{N}`). Every token matches `/^[\p{L}\p{N}]+$/u`: no space, quote or operator
 * character. What every store indexes and what a query's words are compared with.
 *
 * @example
 * ```ts
 * searchTokens('Jane.Doe@example.com, İstanbul café'); // ['jane', 'doe', 'example', 'com', 'istanbul', 'cafe']
 * ```
 */
export function searchTokens(text: string): string[] {
  // Lower-casing can give back a combining mark (only U+0130 in Unicode's default mapping, and
  // that one is decomposed first), so the folded, lower-cased text is folded once more.
  return fold(fold(text).toLowerCase()).match(WORD) ?? [];
}

/**
 * The words of a query: its {@link searchTokens} without the operator words (`AND`, `OR`, `NOT`,
 * `NEAR` written in capitals), each once, at most {@link SEARCH_QUERY_LIMITS}.words of them.
 */
export function searchTerms(query: string): string[] {
  const terms = new Set<string>();
  for (const word of fold(query).match(WORD) ?? []) {
    if (OPERATOR_WORDS.has(word)) continue;
    for (const token of searchTokens(word)) {
      terms.add(token);
      if (terms.size === SEARCH_QUERY_LIMITS.words) return [...terms];
    }
  }
  return [...terms];
}

/**
 * `terms` with the query's last word (the one being typed) moved to the end, where a prefix
 * search reads its prefix: `fib lucas fib` → `lucas fib`. When the word limit cut it off, it
 * takes the last place.
 */
function lastWordLast(query: string, terms: readonly string[]): string[] {
  let last: string | undefined;
  for (const word of fold(query).match(WORD) ?? []) {
    if (OPERATOR_WORDS.has(word)) continue;
    last = searchTokens(word).at(-1) ?? last;
  }
  if (last === undefined || terms.at(-1) === last) return [...terms];
  const rest = terms.filter((term) => term !== last);
  return [...rest.slice(0, SEARCH_QUERY_LIMITS.words - 1), last];
}

/**
 * The score of a message whose words (its {@link searchTokens}) hold every term, or undefined
 * when one is missing. With `prefix`, the last term is a prefix: it counts every word that
 * starts with it (`fib` counts `fib` and `fibonacci`), and is missing when none does. The score: the sum over the terms, in order, of `(f × 2.2) / ((f + 0.3) + (0.028125
 * × n))`, where `f` is how often the term occurs and `n` how many words the message has (BM25's
 * term weighting with k1 = 1.2, b = 0.75 and a typical length of 32 words, without IDF). It
 * depends only on the message and the query, so it never moves when other messages are saved
 * (a keyset cursor stays put), and every store computes it with the same double-precision
 * operations in the same order, so all give the same number.
 */
export function searchScore(
  tokens: readonly string[],
  terms: readonly string[],
  prefix = false,
): number | undefined {
  let score = 0;
  const last = terms.length - 1;
  for (const [index, term] of terms.entries()) {
    let count = 0;
    if (prefix && index === last) {
      for (const token of tokens) if (token.startsWith(term)) count += 1;
    } else {
      for (const token of tokens) if (token === term) count += 1;
    }
    if (count === 0) return undefined;
    score += termScore(count, tokens.length);
  }
  return score;
}

function termScore(count: number, words: number): number {
  return (count * 2.2) / (count + 0.3 + 0.028125 * words);
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

// A word as written (with its combining marks), for finding where a term occurs in the text.
const TEXT_WORD = /[\p{L}\p{N}\p{M}]+/gu;
const SNIPPET_BEFORE = 60;
const SNIPPET_LENGTH = 160;

/**
 * An excerpt of `text` around the first word whose {@link searchTokens} hold one of `terms`
 * (with `prefix`, or a word that starts with the last term):
 * about {@link SNIPPET_BEFORE} characters before it, {@link SNIPPET_LENGTH} in all, whitespace
 * collapsed, with `…` where text was cut. The start of the text when no term is found.
 */
export function searchSnippet(text: string, terms: readonly string[], prefix = false): string {
  const flat = text.normalize('NFC').replace(/\s+/gu, ' ').trim();
  const stem = prefix ? terms.at(-1) : undefined;
  let first = -1;
  for (const match of flat.matchAll(TEXT_WORD)) {
    if (
      searchTokens(match[0]).some(
        (token) => terms.includes(token) || (stem !== undefined && token.startsWith(stem)),
      )
    ) {
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
  /**
   * The last of `terms` is a prefix: it matches every word that starts with it (see
   * `SearchMessagesInput.prefix`; score it with `searchScore(tokens, terms, true)`). Only true
   * when the store declares `capabilities.searchPrefix`.
   */
  readonly prefix: boolean;
  /** Hits per page (the driver returns up to `limit + 1`, so the kit knows whether more follow). */
  readonly limit: number;
  /**
   * Where the page starts: after this hit's sort key (the last hit of the previous page), or
   * undefined for the first page. A driver returns only matches that sort after it (see
   * {@link SearchPosition}), so a page never skips or repeats a hit because messages were
   * saved, replaced or pruned between pages.
   */
  readonly after: SearchPosition | undefined;
}

/**
 * A hit's sort key: best first means `score` descending, then `chatId` ascending (code-unit
 * order; SQL's binary / `"C"` collation), then `sequence` ascending. A match sorts after the
 * position when its score is lower, or equal with a greater chat id, or equal with the same chat
 * and a greater sequence.
 */
export interface SearchPosition {
  /** The hit's {@link searchScore}. */
  readonly score: number;
  /** Its chat. */
  readonly chatId: string;
  /** Its sequence. */
  readonly sequence: number;
}

/**
 * The order of search hits (best first): negative when `left` comes before `right`. Score
 * descending, then chat id in code-unit order, then sequence.
 */
export function compareSearchPositions(left: SearchPosition, right: SearchPosition): number {
  if (left.score !== right.score) return left.score > right.score ? -1 : 1;
  if (left.chatId !== right.chatId) return left.chatId < right.chatId ? -1 : 1;
  return left.sequence - right.sequence;
}

/** One message a driver found: the kit adds the role and the snippet, and cuts the page. */
export interface SearchMatch {
  /** The chat. */
  readonly chatId: string;
  /** The node id. */
  readonly messageId: string;
  /** The node's sequence. */
  readonly sequence: number;
  /** The contract's score, {@link searchScore} of the message's words and the terms. */
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

// A cursor is `<score>:<sequence>:<chat id, URI-encoded>:<fingerprint>`: the sort key of the
// page's last hit (a keyset, never an offset) and a fingerprint of the search and the key, so one
// search's cursor is refused by another and a mangled one is caught. Its fields are checked and
// only ever reach a store as bound values.
function fingerprint(
  search: Pick<PreparedSearch, 'userId' | 'chatId' | 'branch' | 'terms' | 'prefix'>,
  position: SearchPosition,
): string {
  // A whole-word search keeps the fingerprint it always had, so its cursors stay valid.
  const text = JSON.stringify([
    search.userId,
    search.chatId,
    search.branch,
    search.prefix ? ['prefix', ...search.terms] : search.terms,
    position.score,
    position.chatId,
    position.sequence,
  ]);
  // FNV-1a, 32 bits: enough to tell searches apart, not a secret.
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36);
}

/** The cursor of the page after `search`'s, whose last hit was `last`. */
export function searchCursor(search: PreparedSearch, last: SearchPosition): string {
  const position = { score: last.score, chatId: last.chatId, sequence: last.sequence };
  return `${String(position.score)}:${position.sequence}:${encodeURIComponent(position.chatId)}:${fingerprint(search, position)}`;
}

const CURSOR = /^([0-9.e+-]{1,32}):(\d{1,16}):([^:]{1,4096}):([0-9a-z]{1,8})$/;

function readCursor(
  cursor: unknown,
  search: Pick<PreparedSearch, 'userId' | 'chatId' | 'branch' | 'terms' | 'prefix'>,
): SearchPosition | undefined {
  const match = typeof cursor === 'string' ? CURSOR.exec(cursor) : null;
  if (match === null) return undefined;
  const [, scoreText, sequenceText, chatText, hash] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
  ];
  const score = Number(scoreText);
  const sequence = Number(sequenceText);
  if (!Number.isFinite(score) || score < 0 || String(score) !== scoreText) return undefined;
  if (!Number.isSafeInteger(sequence)) return undefined;
  let chatId: string;
  try {
    chatId = decodeURIComponent(chatText);
  } catch {
    return undefined;
  }
  try {
    assertIdentifier('cursor', 'chatId', chatId);
  } catch {
    return undefined;
  }
  const position = { score, chatId, sequence };
  return hash === fingerprint(search, position) ? position : undefined;
}

/**
 * Checks `searchMessages` input: ids, a query with at least one word (an empty query or one of
 * operators and punctuation only is refused), `branch` only with `chatId`, a page size from 1 to
 * {@link SEARCH_PAGE_SIZE}.max, `prefix` a boolean and only when `prefixSupported` (the store
 * declares `capabilities.searchPrefix`), and a cursor of this same search.
 */
export function prepareSearch(input: SearchMessagesInput, prefixSupported = false): PreparedSearch {
  const method = 'searchMessages(input)';
  assertInputObject(method, input);
  const { userId, query, chatId, branch, limit, cursor, prefix } = input;
  if (prefix !== undefined && typeof prefix !== 'boolean')
    throw searchProblem(method, 'prefix', `must be a boolean, received ${typeof prefix}`);
  if (prefix === true && !prefixSupported)
    throw searchProblem(
      method,
      'prefix',
      'is only for a store that declares capabilities.searchPrefix (this one matches whole words only)',
    );
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
  let terms = searchTerms(query);
  if (prefix === true && terms.length > 0) terms = lastWordLast(query, terms);
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
  const scope = { userId, chatId, branch, terms, prefix: prefix === true };
  let after: SearchPosition | undefined;
  if (cursor !== undefined) {
    after = readCursor(cursor, scope);
    if (after === undefined) {
      throw searchProblem(
        method,
        'cursor',
        'is not a nextCursor of this search (same user, query, chat and branch)',
      );
    }
  }
  return { ...scope, limit: limit ?? SEARCH_PAGE_SIZE.default, after };
}

/** A driver's match as the contract returns it. */
export function searchHit(match: SearchMatch, terms: readonly string[], prefix = false): SearchHit {
  return {
    chatId: match.chatId,
    messageId: match.messageId,
    role: match.message.role,
    sequence: match.sequence,
    score: match.score,
    snippet: searchSnippet(messageSearchText(match.message), terms, prefix),
    branches: match.branches,
    message: match.message,
  };
}
