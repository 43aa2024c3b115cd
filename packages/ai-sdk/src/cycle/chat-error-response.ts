import { NotFoundError, OwnershipError, ValidationError } from '@ctxgraph/fragments-core';

/**
 * The HTTP answer for an error of the cycle, as JSON `{ error }`: 400 for input refused before
 * anything was done with it (a `ChatRequestError`, with its `issues`; any `ValidationError`, such
 * as a chat, leaf, node or message id a read route got that the store refuses: too long, NUL, a
 * lone surrogate), 404 for something unknown (`ChatNotFoundForUserError`, any `NotFoundError` such
 * as the unknown node of `openVersion`, and a chat of another user, answered as unknown so that
 * its existence is not revealed); undefined for anything else (let it be a 500).
 *
 * @example
 * ```ts
 * app.onError((error) => chatErrorResponse(error) ?? new Response('Internal error', { status: 500 }));
 * ```
 */
export function chatErrorResponse(error: unknown): Response | undefined {
  if (ValidationError.isInstance(error)) {
    return Response.json({ error: error.message, issues: error.issues }, { status: 400 });
  }
  if (OwnershipError.isInstance(error)) {
    return Response.json({ error: `No chat '${error.chatId}' for this user.` }, { status: 404 });
  }
  if (NotFoundError.isInstance(error)) {
    return Response.json({ error: error.message }, { status: 404 });
  }
  return undefined;
}
