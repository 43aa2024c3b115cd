import {
  BranchExistsError,
  BranchNotFoundError,
  BudgetExceededError,
  ChatNotFoundError,
  CheckpointExistsError,
  CheckpointNotFoundError,
  ConflictError,
  ContextConflictError,
  CtxGraphError,
  EngineError,
  HeadConflictError,
  LiveReplyConflictError,
  LiveReplyLostError,
  LiveReplyOffsetError,
  MessageIdConflictError,
  MessageNotFoundError,
  NotFoundError,
  OwnershipError,
  RenderError,
  SchemaVersionError,
  StoreError,
  UnsupportedCapabilityError,
  UnsupportedSpecificationError,
  ValidationError,
} from '@ctxgraph/fragments-core';

// Workers RPC keeps only the message of an error thrown by a Durable Object's method: the caller
// gets a plain `Error` whose message starts with the class name, without the class or its
// fields (a `HeadConflictError`'s `currentHeadId`, a `ValidationError`'s `issues`). So an object
// method returns its outcome as a value, and the Worker rebuilds the ctxgraph error.

/** A ctxgraph error as plain data (structured-cloneable), to cross an RPC boundary. */
export interface TransportedError {
  /** The error's `name`: `HeadConflictError`, `ValidationError`, … */
  readonly name: string;
  /** The error's message, as it was. */
  readonly message: string;
  /** Its own fields (`chatId`, `currentHeadId`, `issues`, …); not its `cause` or stack. */
  readonly fields: Readonly<Record<string, unknown>>;
}

/** What a Durable Object method returns for a store call: its value, or its ctxgraph error. */
export type StoreCallOutcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: TransportedError };

type CtxGraphErrorClass = typeof CtxGraphError;

/** Every error class of `@ctxgraph/fragments-core`, by name. */
const ERROR_CLASSES: ReadonlyMap<string, CtxGraphErrorClass> = new Map(
  (
    [
      CtxGraphError,
      ValidationError,
      NotFoundError,
      ChatNotFoundError,
      MessageNotFoundError,
      BranchNotFoundError,
      CheckpointNotFoundError,
      ConflictError,
      HeadConflictError,
      MessageIdConflictError,
      ContextConflictError,
      BranchExistsError,
      CheckpointExistsError,
      OwnershipError,
      UnsupportedSpecificationError,
      RenderError,
      UnsupportedCapabilityError,
      StoreError,
      SchemaVersionError,
      EngineError,
      BudgetExceededError,
      LiveReplyConflictError,
      LiveReplyLostError,
      LiveReplyOffsetError,
    ] as unknown as CtxGraphErrorClass[]
  ).map((errorClass) => [errorClass.errorName, errorClass]),
);

const NOT_FIELDS = new Set(['name', 'message', 'stack', 'cause']);

/**
 * Runs `call` (a store or engine call, inside the Durable Object) and returns its outcome as a
 * value: `{ ok: true, value }`, or `{ ok: false, error }` for a ctxgraph error, its fields kept.
 * Any other error is thrown as it is (RPC hands the caller its message).
 *
 * @example
 * ```ts
 * // In the chat's Durable Object:
 * commit(input: CommitInput): Promise<StoreCallOutcome<CommitResult>> {
 *   return storeCallOutcome(() => this.store.commit(input));
 * }
 * // In the Worker: the result, or the HeadConflictError (its class and fields) thrown again.
 * const result = settleStoreCall(await env.CHATS.get(id).commit(input));
 * ```
 */
export async function storeCallOutcome<T>(
  call: () => T | Promise<T>,
): Promise<StoreCallOutcome<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    if (!CtxGraphError.isInstance(error)) throw error;
    const fields: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(error)) if (!NOT_FIELDS.has(key)) fields[key] = value;
    return { ok: false, error: { name: error.name, message: error.message, fields } };
  }
}

/**
 * The value of an outcome from {@link storeCallOutcome}, or its error thrown again as its
 * ctxgraph class (so `HeadConflictError.isInstance(error)` and `instanceof` hold, fields
 * included). An error name this version does not know comes back as a `StoreError` naming it.
 */
export function settleStoreCall<T>(outcome: StoreCallOutcome<T>): T {
  if (outcome.ok) return outcome.value;
  throw reviveError(outcome.error);
}

/** A transported error as an instance of its ctxgraph class. */
export function reviveError(transported: TransportedError): CtxGraphError {
  const errorClass = ERROR_CLASSES.get(transported.name);
  if (errorClass === undefined) {
    return new StoreError(
      `A Durable Object answered with an error this version does not know (${transported.name}): ${transported.message}`,
    );
  }
  // The base constructor with the class as `new.target`: it sets the name and every marker of
  // the class's chain (what `isInstance` reads), and the message is kept as it was, not rebuilt
  // from the fields by the subclass's constructor.
  const error = Reflect.construct(
    CtxGraphError,
    [transported.message],
    errorClass,
  ) as CtxGraphError;
  Object.assign(error, transported.fields);
  return error;
}
