/**
 * What the playground's server and page share that no route's type can carry: the renderer names
 * (values both sides check), the user header, and the error body (written by the app's error
 * handler, not by a route). Every answer's shape comes from the routes themselves: the page reads
 * them through Hono's typed client (`hc<PlaygroundRoutes>`, see `client/api.ts`), so they cannot
 * drift. Nothing here imports a library: the page bundles this file.
 */
import type { ValidationIssue } from '@ctxgraph/fragments-core';

/** The renderers the playground offers, by the name the page uses. */
export const RENDERER_NAMES: readonly ['xml', 'markdown', 'toon'] = ['xml', 'markdown', 'toon'];

/** One of {@link RENDERER_NAMES}. */
export type RendererName = (typeof RENDERER_NAMES)[number];

/** The header that names the user a request is made for. */
export const USER_HEADER = 'x-ctxgraph-user';

/** The JSON body of every error response. */
export interface ErrorBody {
  error: {
    /** The error class name (`ValidationError`, `OwnershipError`, …) or `InternalError`. */
    name: string;
    /** What went wrong, for a person. */
    message: string;
    /** Each problem with its path, for validation errors. */
    issues?: readonly ValidationIssue[];
  };
}
