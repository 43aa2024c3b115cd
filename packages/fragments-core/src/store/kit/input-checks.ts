import { ValidationError, type ValidationIssue } from '../../errors/errors';
import type { JsonObject } from '../../json';
import { stringProblem, utf8Length } from '../../rules/identifiers';

// The small checks every prepare function of the kit is built from: an input that is an object,
// a boolean flag, a title, a text within the store's size limit, and one error for a list of
// problems. Third-party stores that check inputs themselves may use them.

/**
 * What the prepare functions need to know of the store: its size limit and which optional
 * capabilities change what an input may carry.
 */
export interface StoreInputOptions {
  /**
   * The largest JSON text (a message, an engine record, metadata, a context lane, live-reply
   * data or a batch of chunks) and title the store accepts, in UTF-8 bytes.
   * @default no limit
   */
  readonly maxJsonBytes?: number;
  /** The store declares `liveReplies`: a commit may carry `startReply` / `endReply`. @default false */
  readonly liveReplies?: boolean;
  /** The store declares `searchPrefix`: a search may ask for `prefix: true`. @default false */
  readonly searchPrefix?: boolean;
}

/** The size limit of a store in UTF-8 bytes, or undefined for none. */
export type ByteLimit = number | undefined;

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
      : titleProblem(title);
  if (problem !== undefined) {
    throw new ValidationError(`${method}: title ${problem}.`, {
      issues: [{ path: 'title', message: problem }],
    });
  }
}

function titleProblem(title: string): string | undefined {
  const problem = stringProblem(title);
  if (problem === undefined) return undefined;
  // The string rule's words, said of a title.
  return title.includes('\u0000')
    ? 'must not contain the NUL character'
    : 'must not contain a lone UTF-16 surrogate (not valid Unicode text)';
}

/** Refuses a text longer than `limit` UTF-8 bytes (no limit when undefined). */
export function checkBytes(method: string, field: string, text: string, limit: ByteLimit): void {
  // UTF-8 takes at most 3 bytes per UTF-16 code unit: only long texts need counting.
  if (limit === undefined || text.length * 3 <= limit) return;
  const bytes = utf8Length(text);
  if (bytes <= limit) return;
  const problem = `is ${bytes} bytes, more than the store accepts (${limit})`;
  throw new ValidationError(`${method}: ${field} ${problem}. Nothing was written.`, {
    issues: [{ path: field, message: problem }],
  });
}

/** One `ValidationError` for every problem found: the first five in the message, all in `issues`. */
export function issuesError(method: string, issues: ValidationIssue[]): ValidationError {
  const shown = issues.slice(0, 5).map((issue) => `${issue.path}: ${issue.message}`);
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : '';
  return new ValidationError(`${method}: ${shown.join('; ')}${more}.`, { issues });
}

/** Shallow-merges metadata patches into existing metadata (the rule of `updateChat`). */
export function mergeMetadata(current: JsonObject, patch: JsonObject | undefined): JsonObject {
  return patch === undefined ? current : { ...current, ...patch };
}
