const markerPrefix = 'ctxgraph.error';

/** Options shared by every ctxgraph error. */
export interface CtxGraphErrorOptions {
  /** The error that caused this one (a driver error, a validation failure, …). */
  cause?: unknown;
}

type ErrorClass = abstract new (...args: never[]) => CtxGraphError;

function markerFor(errorName: string): symbol {
  return Symbol.for(`${markerPrefix}.${errorName}`);
}

/**
 * The base of every error ctxgraph throws.
 *
 * Each class declares a stable `static errorName`. Constructing an error marks it with
 * `Symbol.for('ctxgraph.error.<Name>')` for its own class and every ctxgraph class above it, and
 * `isInstance()` checks that marker instead of the prototype chain, so the check still works
 * when an app ends up with two copies of a ctxgraph package (where `instanceof` fails).
 *
 * Third-party stores and renderers subclass it the same way:
 *
 * @example
 * ```ts
 * class DynamoThrottledError extends StoreError {
 *   static override readonly errorName = 'DynamoThrottledError';
 * }
 * DynamoThrottledError.isInstance(error); // marker check
 * StoreError.isInstance(error);           // true as well
 * ```
 */
export class CtxGraphError extends Error {
  /** The stable name of this error class; also the error's `name`. */
  static readonly errorName: string = 'CtxGraphError';

  constructor(message: string, options: CtxGraphErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const errorClass = new.target as unknown as typeof CtxGraphError;
    this.name = errorClass.errorName;
    let current: unknown = errorClass;
    while (typeof current === 'function' && current !== Error) {
      if (Object.hasOwn(current, 'errorName')) {
        const name = (current as typeof CtxGraphError).errorName;
        Object.defineProperty(this, markerFor(name), { value: true, enumerable: false });
      }
      current = Object.getPrototypeOf(current);
    }
  }

  /**
   * True when `error` was constructed by this class or a subclass of it, from any copy of the
   * package that defines it.
   */
  static isInstance<T extends ErrorClass>(
    this: T & { readonly errorName: string },
    error: unknown,
  ): error is InstanceType<T> {
    if (typeof error !== 'object' || error === null) return false;
    // biome-ignore lint/complexity/noThisInStatic: `this` is the subclass isInstance was called on.
    return (error as Record<symbol, unknown>)[markerFor(this.errorName)] === true;
  }
}
