import { ValidationError } from '@ctxgraph/fragments-core';
import { expect } from 'vitest';
import { SerializationError } from '../serialization-error';

/** Runs `action`, expecting a SerializationError (a ValidationError too), and returns it. */
export function serializationError(action: () => unknown): SerializationError {
  try {
    action();
  } catch (error) {
    expect(SerializationError.isInstance(error)).toBe(true);
    expect(ValidationError.isInstance(error)).toBe(true);
    expect((error as Error).name).toBe('SerializationError');
    return error as SerializationError;
  }
  throw new Error('expected a SerializationError, but nothing was thrown');
}
