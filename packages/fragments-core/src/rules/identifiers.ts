import { ValidationError } from '../errors/errors';
import { MAX_IDENTIFIER_BYTES, MAX_IDENTIFIER_LENGTH } from './limits';

// What an id or a name is, and how long a string is in UTF-8: the rule every store, the engine
// and the builders apply to chat ids, user ids, message ids, branch and checkpoint names.

// A high surrogate not followed by a low one, or a low one not preceded by a high one. Such
// strings are not valid Unicode: PostgreSQL refuses them and JSON encoders disagree on them.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * True when a string has no lone surrogate. `String.prototype.isWellFormed` (ES2024, in every
 * runtime this package supports) answers without a regular expression's scan; the pattern above
 * stays for a runtime that lacks it.
 */
export const isWellFormed: (value: string) => boolean =
  typeof (String.prototype as { isWellFormed?: unknown }).isWellFormed === 'function'
    ? (value) => (value as unknown as { isWellFormed(): boolean }).isWellFormed()
    : (value) => !loneSurrogate.test(value);

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
