import { ChatRequestError } from '../errors';

/**
 * The parsed JSON body of a chat request (what `DefaultChatTransport` posts), for
 * `cycle.begin()`. A body that is not JSON (cut off, empty, a form post) is the client's mistake,
 * so it is a {@link ChatRequestError} (status 400, which `chatErrorResponse` answers), never the
 * `SyntaxError` of `request.json()` that a server turns into a 500. Nothing is written.
 *
 * @example
 * ```ts
 * const turn = await cycle.begin(await readChatBody(request), { userId });
 * ```
 */
export async function readChatBody(request: Request): Promise<unknown> {
  const text = await request.text();
  try {
    return JSON.parse(text);
  } catch (error) {
    const shown =
      text.length === 0 ? 'an empty body' : `${text.length} characters that are not JSON`;
    throw new ChatRequestError(
      `Chat request refused: the body must be JSON such as { id, messages, trigger }, received ${shown}.`,
      { issues: [{ path: '', message: 'expected a JSON body' }], cause: error },
    );
  }
}
