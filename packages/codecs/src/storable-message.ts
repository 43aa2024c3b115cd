import {
  assertIdentifier,
  describeValue,
  jsonIssues,
  prefixPath,
  ValidationError,
  type ValidationIssue,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';

export const roles: readonly string[] = ['system', 'user', 'assistant'];

/**
 * The problems that would make a store refuse `value` as a message, or make it no `UIMessage`
 * at all, each with its path under `path`; empty when it can be stored. The same rules every
 * store applies on `save()` (they come from `@ctxgraph/fragments-core`), checked up front so that
 * what `resolve()` sends to the model can always be saved:
 *
 * - an object with an `id` that is a valid identifier (non-empty, at most 512 characters and 512
 *   bytes of UTF-8, no NUL, no lone surrogate), a `role` of `system`, `user` or `assistant`, and
 *   `parts`, an array of objects each with a non-empty string `type`;
 * - content that is plain JSON: no NUL or lone UTF-16 surrogate in any string (a `slice` that cut
 *   an emoji in half), no bigint, function, class instance, non-finite number or cycle, and no
 *   deeper than `MAX_JSON_DEPTH` (128) levels, the message itself being level 1.
 *
 * It does not run the AI SDK's validation of every part's fields (`validateMessages` does). Its
 * cost is one walk over the message.
 *
 * @example
 * ```ts
 * storableMessageIssues({ id: 'q1', role: 'user', parts: [{ type: 'text', text: '\uD83D' }] });
 * // [{ path: 'message.parts[0].text', message: 'string contains a lone UTF-16 surrogate (not valid Unicode text)' }]
 * ```
 */
export function storableMessageIssues(value: unknown, path = 'message'): ValidationIssue[] {
  return messageIssues(value).map((issue) => ({
    path: prefixPath(path, issue.path),
    message: issue.message,
  }));
}

/**
 * Throws a `ValidationError` when {@link storableMessageIssues} finds anything, naming `where`
 * (the caller, such as `set(...fragments): fragments[2]`), the message id when it has a valid one,
 * and each problem's path:
 * `set(...fragments): fragments[0]: message "q1": message.parts[0].text: string contains a lone UTF-16 surrogate (not valid Unicode text).`
 *
 * @example
 * ```ts
 * const encoded = fragment.codec.encode();
 * assertStorableMessage(encoded, `set(...fragments): fragments[${index}]`);
 * ```
 */
export function assertStorableMessage(
  value: unknown,
  where: string,
  path = 'message',
): asserts value is UIMessage {
  const issues = storableMessageIssues(value, path);
  if (issues.length > 0) throw messageError(where, validId(value), issues);
}

/** The problems of {@link storableMessageIssues}, with paths relative to the message (`id`). */
export function messageIssues(value: unknown): ValidationIssue[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ path: '', message: `expected a UIMessage object, received ${describeValue(value)}` }];
  }
  const record = value as Record<string, unknown>;
  const issues: ValidationIssue[] = [];
  const idProblem = identifierProblem(record.id);
  if (idProblem !== undefined) issues.push({ path: 'id', message: idProblem });
  if (typeof record.role !== 'string' || !roles.includes(record.role)) {
    issues.push({
      path: 'role',
      message: `expected "system", "user" or "assistant", received ${JSON.stringify(record.role) ?? 'undefined'}`,
    });
  }
  if (!Array.isArray(record.parts)) {
    issues.push({
      path: 'parts',
      message: `expected an array, received ${describeValue(record.parts)}`,
    });
  } else {
    record.parts.forEach((part: unknown, index) => {
      const type =
        typeof part === 'object' && part !== null ? (part as { type?: unknown }).type : undefined;
      if (typeof type !== 'string' || type === '') {
        issues.push({
          path: `parts[${index}].type`,
          message: 'expected a part with a string type',
        });
      }
    });
  }
  for (const issue of jsonIssues(value, '')) {
    const path = issue.path.startsWith('.') ? issue.path.slice(1) : issue.path;
    // The id's own check already said what is wrong with it.
    if (path === 'id' && idProblem !== undefined) continue;
    issues.push({ path, message: issue.message });
  }
  return issues;
}

/** The error a builder or {@link assertStorableMessage} throws: who, which message, what. */
export function messageError(
  where: string,
  messageId: string | undefined,
  issues: readonly ValidationIssue[],
): ValidationError {
  const shown = issues.slice(0, 5).map((issue) => `${issue.path}: ${issue.message}`);
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : '';
  const which = messageId === undefined ? '' : `message ${JSON.stringify(messageId)}: `;
  return new ValidationError(`${where}: ${which}${shown.join('; ')}${more}.`, {
    issues: [...issues],
  });
}

/** The message's id when it is a valid identifier (worth naming in an error), else undefined. */
export function validId(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const id = (value as { id?: unknown }).id;
  return identifierProblem(id) === undefined ? (id as string) : undefined;
}

/** Why `value` is not a valid identifier, by the stores' rules, or undefined when it is one. */
export function identifierProblem(value: unknown): string | undefined {
  try {
    assertIdentifier('', 'id', value);
    return undefined;
  } catch (error) {
    if (!ValidationError.isInstance(error)) throw error;
    return error.issues[0]?.message ?? error.message;
  }
}
