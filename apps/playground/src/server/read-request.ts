import type { Context, Env, MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { RENDERER_NAMES, USER_HEADER } from '../shared/wire';
import { fromZodError, PlaygroundRequestError } from './http-errors';

/** A name the page types (checkpoint, branch, message id): trimmed, 1 to 200 characters. */
export const nameSchema: z.ZodString = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(200, 'longer than 200 characters');

/** One of the renderer names. */
export const rendererSchema: z.ZodEnum<{ xml: 'xml'; markdown: 'markdown'; toon: 'toon' }> =
  z.enum(RENDERER_NAMES);

const userIdSchema = z
  .string()
  .trim()
  .min(1, 'the user id must not be empty')
  .max(200, 'the user id is longer than 200 characters');

/**
 * Reads and checks a JSON body: an empty body counts as `{}`; malformed JSON and wrong fields
 * become a ValidationError (a 400) that names the field.
 */
async function readBody<T extends z.ZodType>(context: Context, schema: T): Promise<z.infer<T>> {
  const text = await context.req.text();
  let value: unknown = {};
  if (text.trim() !== '') {
    try {
      value = JSON.parse(text);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new PlaygroundRequestError(`The request body is not valid JSON: ${reason}.`, {
        issues: [{ path: 'body', message: 'malformed JSON' }],
      });
    }
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw fromZodError('request body', parsed.error);
  return parsed.data;
}

/** Reads and checks the query string; wrong parameters become a ValidationError. */
function readQuery<T extends z.ZodType>(context: Context, schema: T): z.infer<T> {
  const parsed = schema.safeParse(context.req.query());
  if (!parsed.success) throw fromZodError('query', parsed.error);
  return parsed.data;
}

/** The user named by the `x-ctxgraph-user` header, or `defaultUserId` when it is absent. */
export function userOf(context: Context, defaultUserId: string): string {
  const header = context.req.header(USER_HEADER);
  if (header === undefined) return defaultUserId;
  const parsed = userIdSchema.safeParse(header);
  if (!parsed.success) throw fromZodError(`${USER_HEADER} header`, parsed.error);
  return parsed.data;
}

/**
 * {@link readBody} as a middleware: the handler reads the checked body with
 * `context.req.valid('json')`, and the route's type carries the body's shape, so the page's typed
 * client (`hc<PlaygroundRoutes>`) is told what to send.
 */
export function jsonBody<S extends z.ZodType, P extends string = string>(
  schema: S,
): MiddlewareHandler<Env, P, { in: { json: z.input<S> }; out: { json: z.output<S> } }> {
  return async (context, next) => {
    context.req.addValidatedData('json', (await readBody(context, schema)) as object);
    await next();
  };
}

/** {@link readQuery} as a middleware: the handler reads the query with `context.req.valid('query')`. */
export function queryOf<S extends z.ZodType, P extends string = string>(
  schema: S,
): MiddlewareHandler<
  Env,
  P,
  { in: { query: { [K in keyof z.input<S>]: string } }; out: { query: z.output<S> } }
> {
  return async (context, next) => {
    context.req.addValidatedData('query', readQuery(context, schema) as object);
    await next();
  };
}
