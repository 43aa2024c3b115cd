import { ApiError } from './api';
import { type PlainError, plainError } from './plain-errors';

/** Any failure of an API call (or of the page itself) in the user's words. */
export function describeError(error: unknown): PlainError {
  if (error instanceof ApiError)
    return plainError({ errorName: error.errorName, message: error.message, issues: error.issues });
  if (error instanceof Error) return plainError({ errorName: error.name, message: error.message });
  return plainError({ errorName: 'Error', message: String(error) });
}
