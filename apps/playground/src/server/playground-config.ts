import { fileURLToPath } from 'node:url';
import { MODEL_VARIABLES } from '../shared/wire';

/**
 * The model of `OPENAI_MODEL` when unset, and the one cost estimates are for when no model is
 * configured (so the cost shown is the one the playground would pay once a key is set).
 */
export const DEFAULT_MODEL_ID = 'gpt-4o-mini';

/** Which store the playground uses, and where its data is. */
export type StoreChoice =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'memory' }
  | { readonly kind: 'postgres'; readonly url: string };

/** An OpenAI-compatible model to answer user messages; absent means replies are written by hand. */
export interface ModelChoice {
  /** The model name sent to the API. */
  readonly modelId: string;
  /** The API key (local servers often accept any value). */
  readonly apiKey: string;
  /** An OpenAI-compatible base URL, or undefined for OpenAI itself. */
  readonly baseURL: string | undefined;
  /**
   * `'echo'`: the built-in offline model (`PLAYGROUND_MODEL=echo`), which echoes the question and
   * reports usage like a provider with a prefix cache. @default 'openai-compatible'
   */
  readonly kind?: 'openai-compatible' | 'echo';
}

/** Everything the playground server reads from its environment. */
export interface PlaygroundConfig {
  /** The port to listen on. @default 5173 */
  readonly port: number;
  /** The interface to listen on. @default '127.0.0.1' */
  readonly host: string;
  /** The store. */
  readonly store: StoreChoice;
  /** The model, or null. */
  readonly model: ModelChoice | null;
  /** The user the page starts as. @default 'demo-user' */
  readonly defaultUserId: string;
}

/** The package folder (apps/playground), from src/server or dist/server alike. */
export const PACKAGE_DIRECTORY: string = fileURLToPath(new URL('../../', import.meta.url));

/** Where the SQLite file goes when SQLITE_PATH is not set. */
export const DEFAULT_SQLITE_PATH: string = fileURLToPath(
  new URL('../../data/playground.db', import.meta.url),
);

/**
 * Reads the configuration from environment variables: PORT, HOST, STORE (sqlite | memory |
 * postgres), SQLITE_PATH, DATABASE_URL, the model's ({@link MODEL_VARIABLES}: PLAYGROUND_MODEL,
 * OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_MODEL), PLAYGROUND_USER. Throws with a clear message on a value it cannot use.
 *
 * @example
 * ```ts
 * const config = readPlaygroundConfig(process.env);
 * ```
 */
export function readPlaygroundConfig(
  environment: Record<string, string | undefined>,
): PlaygroundConfig {
  const portText = environment.PORT?.trim() || '5173';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be a whole number from 0 to 65535, received "${portText}".`);
  }
  const databaseUrl = environment.DATABASE_URL?.trim() || undefined;
  const storeKind = (environment.STORE?.trim().toLowerCase() ||
    (databaseUrl ? 'postgres' : 'sqlite')) as string;
  let store: StoreChoice;
  if (storeKind === 'memory') store = { kind: 'memory' };
  else if (storeKind === 'sqlite') {
    store = { kind: 'sqlite', path: environment.SQLITE_PATH?.trim() || DEFAULT_SQLITE_PATH };
  } else if (storeKind === 'postgres') {
    if (!databaseUrl)
      throw new Error('STORE=postgres needs DATABASE_URL (postgres://user:password@host/db).');
    store = { kind: 'postgres', url: databaseUrl };
  } else {
    throw new Error(`STORE must be sqlite, memory or postgres, received "${environment.STORE}".`);
  }
  const apiKey = environment[MODEL_VARIABLES.apiKey]?.trim() || undefined;
  const baseURL = environment[MODEL_VARIABLES.baseURL]?.trim() || undefined;
  const modelKind = environment[MODEL_VARIABLES.kind]?.trim().toLowerCase() || undefined;
  if (modelKind !== undefined && modelKind !== 'echo' && modelKind !== 'openai') {
    throw new Error(
      `${MODEL_VARIABLES.kind} must be echo or openai, received "${environment[MODEL_VARIABLES.kind]}".`,
    );
  }
  const model: ModelChoice | null =
    modelKind === 'echo'
      ? { modelId: 'echo', apiKey: '', baseURL: undefined, kind: 'echo' }
      : apiKey || baseURL
        ? {
            modelId: environment[MODEL_VARIABLES.modelId]?.trim() || DEFAULT_MODEL_ID,
            // A local OpenAI-compatible server usually ignores the key, but the client requires one.
            apiKey: apiKey ?? 'not-needed',
            baseURL,
          }
        : null;
  return {
    port,
    host: environment.HOST?.trim() || '127.0.0.1',
    store,
    model,
    defaultUserId: environment.PLAYGROUND_USER?.trim() || 'demo-user',
  };
}
