import type { ValidationIssue } from '@ctxgraph/fragments-core';
import { SerializationError } from '../serialization-error';

/** The public method a conversion runs for, named first in every error message it raises. */
export type Operation =
  | 'fromFragment'
  | 'toFragment'
  | 'encodeSerializedValue'
  | 'decodeSerializedValue';

/**
 * The error for `issues` found during one top-level call: `<operation>: <summary>: <issues>.`,
 * with `cause` kept when a definition's conversion or a codec threw. Returned, not thrown, so
 * callers write `throw fail(…)` and the compiler sees the branch end.
 */
export function fail(
  walk: { readonly operation: Operation },
  issues: ValidationIssue[],
  summary?: string,
  cause?: unknown,
): SerializationError {
  const head = summary === undefined ? '' : `${summary}: `;
  const options = cause === undefined ? { issues } : { issues, cause };
  return new SerializationError(`${walk.operation}: ${head}${formatIssues(issues)}.`, options);
}

/** Issues as one line for an error message: `path: message; path: message`. */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  return issues
    .map((issue) => (issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`))
    .join('; ');
}

/** The message of whatever a conversion or codec threw, for the issue that reports it. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
