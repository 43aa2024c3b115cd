import type { FragmentBudget } from './fragment-budget';

/**
 * What a fragment holds: text, numbers, booleans, nothing, another fragment, or arrays and plain
 * objects of these, nested as deep as needed. `null` and `undefined` are allowed and are skipped
 * when rendering.
 */
export type FragmentData =
  | string
  | number
  | boolean
  | null
  | undefined
  | ContextFragment
  | FragmentData[]
  | { [key: string]: FragmentData };

/**
 * `'fragment'` (the default) goes into the system prompt; `'message'` is a conversation message
 * that the engine queues and persists.
 */
export type FragmentType = 'fragment' | 'message';

/**
 * Gives a fragment alternate representations. Message fragments carry one: `encode()` yields the
 * AI SDK `UIMessage` (used by both `resolve()` and `save()`), `decode()` the materialized form.
 */
export interface FragmentCodec<Encoded = unknown, Decoded = unknown> {
  /** The stored / AI SDK form (a `UIMessage` for message fragments). */
  encode(): Encoded;
  /** The materialized form, for code that wants it rather than the wire shape. */
  decode(): Decoded;
}

/**
 * The unit of context: a named piece of data. Builders such as `role()`, `hint()` and `term()`
 * create them; `fragment()` nests them.
 */
export interface ContextFragment<T extends FragmentData = FragmentData> {
  /** Message fragments have one (the message id); others may. */
  id?: string;
  /** The tag name: `'role'`, `'hint'`, `'user'`, or any name of your own. */
  name: string;
  /** The content. */
  data: T;
  /** @default 'fragment' */
  type?: FragmentType;
  /** Whether `save()` persists it (message fragments). */
  persist?: boolean;
  /** Alternate representations; required for message fragments. */
  codec?: FragmentCodec;
  /** Free-form bookkeeping; never rendered. */
  metadata?: Record<string, unknown>;
  /**
   * Priority and required mark for `resolve({ budget })` (set with `withBudget()`); never
   * rendered.
   */
  budget?: FragmentBudget;
}
