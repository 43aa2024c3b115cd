import { prefixPath, ValidationError } from '@ctxgraph/fragments-core';
import type { FragmentTypeDefinition, SerializationContext } from '../fragment-type-definition';
import { SerializationError } from '../serialization-error';
import { errorMessage, fail } from './fail';
import type { Walk } from './walk';

/**
 * Runs one of a definition's conversions for the fragment at `path`, handing it the context it
 * converts nested values with, and gives what it throws this fragment's path: a
 * `ValidationError`'s issues are put below the path, anything else becomes an issue at it.
 */
export function callDefinition<T>(
  walk: Walk,
  path: string,
  definition: FragmentTypeDefinition,
  conversion: 'fromFragment' | 'toFragment',
  convert: (context: SerializationContext) => T,
): T {
  try {
    return convert(contextAt(path, walk));
  } catch (error) {
    // Errors from nested conversions already carry full paths.
    if (SerializationError.isInstance(error)) throw error;
    if (ValidationError.isInstance(error)) {
      const issues = error.issues.map((issue) => ({
        path: prefixPath(path, issue.path === 'input' ? '' : issue.path),
        message: issue.message,
      }));
      throw fail(walk, issues, `the "${definition.type}" fragment was refused`, error);
    }
    throw fail(
      walk,
      [
        {
          path,
          message: `the "${definition.type}" type's ${conversion} threw: ${errorMessage(error)}`,
        },
      ],
      undefined,
      error,
    );
  }
}

function contextAt(path: string, walk: Walk): SerializationContext {
  return {
    path,
    encode: (value, at = '') => walk.nested.encode(value, prefixPath(path, at), walk),
    decode: (value, at = '') => walk.nested.decode(value, prefixPath(path, at), walk),
  };
}
