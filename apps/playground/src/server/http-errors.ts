import {
  ConflictError,
  CtxGraphError,
  EngineError,
  NotFoundError,
  OwnershipError,
  RenderError,
  ValidationError,
} from '@ctxgraph/fragments-core';
import type { z } from 'zod';
import type { ErrorBody } from '../shared/wire';

/** An HTTP status with the body that explains it. */
export interface ErrorResponse {
  status: 400 | 403 | 404 | 409 | 422 | 500 | 503;
  body: ErrorBody;
}

/** A request the playground refuses for a reason of its own (no model configured, …). */
export class PlaygroundRequestError extends ValidationError {
  static override readonly errorName: string = 'PlaygroundRequestError';
}

/**
 * Maps an error to its response: bad input 400, refused user 403, missing chat / branch /
 * checkpoint / message 404, conflicts 409, unrenderable context 422. Anything else is a 500 whose
 * message is still shown (the playground is a developer tool), and `unexpected` is true so the
 * caller logs it.
 */
export function toErrorResponse(error: unknown): ErrorResponse & { unexpected: boolean } {
  const message = error instanceof Error ? error.message : String(error);
  const name = CtxGraphError.isInstance(error) ? error.name : 'InternalError';
  const body = (status: ErrorResponse['status'], extra: Partial<ErrorBody['error']> = {}) => ({
    status,
    body: { error: { name, message, ...extra } },
    unexpected: status === 500,
  });
  if (ValidationError.isInstance(error)) return body(400, { issues: error.issues });
  if (OwnershipError.isInstance(error)) return body(403);
  if (NotFoundError.isInstance(error)) return body(404);
  if (ConflictError.isInstance(error)) return body(409);
  if (RenderError.isInstance(error) || EngineError.isInstance(error)) return body(422);
  if (!CtxGraphError.isInstance(error)) {
    return {
      status: 500,
      body: { error: { name, message: `Unexpected error: ${message}` } },
      unexpected: true,
    };
  }
  return body(500);
}

/** Turns a zod failure into a ValidationError whose issues name each bad field. */
export function fromZodError(where: string, error: z.ZodError): ValidationError {
  const issues = error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || where,
    message: issue.message,
  }));
  const list = issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ');
  return new ValidationError(`Invalid ${where}: ${list}.`, { issues });
}
