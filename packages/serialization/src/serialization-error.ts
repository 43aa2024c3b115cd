import { ValidationError } from '@ctxgraph/fragments-core';

/**
 * A fragment could not be turned into its serialized form, or serialized JSON could not be turned
 * back into a fragment: a message fragment, an unknown type or fragment name, JSON that does not
 * match its schema, a value JSON cannot hold, or a builder that refused the hydrated fields.
 * `issues` lists every problem with its path (`policies[1].rule`).
 *
 * It is a {@link ValidationError}, so `ValidationError.isInstance(error)` is true as well.
 */
export class SerializationError extends ValidationError {
  static override readonly errorName: string = 'SerializationError';
}
