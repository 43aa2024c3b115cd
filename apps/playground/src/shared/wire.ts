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

/**
 * The environment variables that give the playground a model: the server's configuration reads
 * them by these names, and the page's no-model notice names them, so the two cannot drift.
 */
export const MODEL_VARIABLES: {
  /** `echo` picks the built-in offline model (no key). */
  readonly kind: 'PLAYGROUND_MODEL';
  /** An OpenAI key: replies from OpenAI. */
  readonly apiKey: 'OPENAI_API_KEY';
  /** Any OpenAI-compatible server instead (a local one); a key is optional there. */
  readonly baseURL: 'OPENAI_BASE_URL';
  /** The model name. */
  readonly modelId: 'OPENAI_MODEL';
} = {
  kind: 'PLAYGROUND_MODEL',
  apiKey: 'OPENAI_API_KEY',
  baseURL: 'OPENAI_BASE_URL',
  modelId: 'OPENAI_MODEL',
};

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
