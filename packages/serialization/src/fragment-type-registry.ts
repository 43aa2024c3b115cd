import type { ValidationIssue } from '@ctxgraph/fragments-core';
import { formatIssues } from './conversion/fail';
import { describeKind } from './describe-kind';
import type { FragmentTypeDefinition } from './fragment-type-definition';
import { SerializationError } from './serialization-error';

/**
 * The `type` of a serialized named group (`fragment(name, ...children)`), reserved: no registered
 * type may use it.
 */
export const GROUP_TYPE = 'fragment';

/**
 * The fragment types of one serializer, checked once when it is made: each definition well
 * formed, each `type` and `fragmentName` used once, {@link GROUP_TYPE} left to groups. Conversions
 * look a definition up by the serialized `type` (hydrating) or by the fragment's `name`
 * (serializing).
 */
export class FragmentTypeRegistry {
  /** The definitions as given, frozen (what `extend()` builds on). */
  readonly definitions: readonly FragmentTypeDefinition[];
  /** The `type` of every registered type, in registration order. */
  readonly types: readonly string[];
  readonly #byType = new Map<string, FragmentTypeDefinition>();
  readonly #byName = new Map<string, FragmentTypeDefinition>();

  /**
   * @throws {SerializationError} naming every definition that is malformed or takes a `type` or
   * `fragmentName` already taken (`types[2].type`), before any is used.
   */
  constructor(definitions: readonly FragmentTypeDefinition[]) {
    const issues: ValidationIssue[] = [];
    for (const [index, definition] of definitions.entries()) {
      const path = `types[${index}]`;
      const problem = checkDefinition(definition);
      if (problem) {
        issues.push({ path, message: problem });
        continue;
      }
      const fragmentName = definition.fragmentName ?? definition.type;
      if (definition.type === GROUP_TYPE) {
        issues.push({
          path: `${path}.type`,
          message: `type "${GROUP_TYPE}" is reserved for named groups made by fragment(name, ...children)`,
        });
      } else if (this.#byType.has(definition.type)) {
        issues.push({
          path: `${path}.type`,
          message: `type "${definition.type}" is already registered`,
        });
      } else if (this.#byName.has(fragmentName)) {
        issues.push({
          path: `${path}.fragmentName`,
          message: `fragments named "${fragmentName}" are already handled by type "${this.#byName.get(fragmentName)?.type}"`,
        });
      } else {
        this.#byType.set(definition.type, definition);
        this.#byName.set(fragmentName, definition);
      }
    }
    if (issues.length > 0) {
      throw new SerializationError(`createSerializer: ${formatIssues(issues)}.`, { issues });
    }
    this.definitions = Object.freeze([...definitions]);
    this.types = Object.freeze([...this.#byType.keys()]);
  }

  /** The definition registered for a serialized `type`, or `undefined`. */
  forType(type: string): FragmentTypeDefinition | undefined {
    return this.#byType.get(type);
  }

  /** The definition that serializes fragments named `name`, or `undefined`. */
  forName(name: string): FragmentTypeDefinition | undefined {
    return this.#byName.get(name);
  }

  /** Whether a type is registered for a serialized `type`. */
  hasType(type: string): boolean {
    return this.#byType.has(type);
  }

  /** The fragment names the registry serializes, for messages: `term, hint, …`. */
  supportedNames(): string {
    return [...this.#byName.keys()].join(', ');
  }
}

/** What is wrong with a value given as a definition (its first problem), or `undefined`. */
function checkDefinition(definition: unknown): string | undefined {
  if (typeof definition !== 'object' || definition === null) {
    return `expected a fragment type definition, received ${describeKind(definition)}`;
  }
  const candidate = definition as Partial<Record<keyof FragmentTypeDefinition, unknown>>;
  if (typeof candidate.type !== 'string' || candidate.type.trim() === '')
    return 'type must be a non-empty string';
  if (
    candidate.fragmentName !== undefined &&
    (typeof candidate.fragmentName !== 'string' || candidate.fragmentName.trim() === '')
  ) {
    return 'fragmentName must be a non-empty string when given';
  }
  const schema = candidate.schema as { safeParse?: unknown } | undefined;
  if (typeof schema?.safeParse !== 'function') return 'schema must be a zod schema';
  if (typeof candidate.fromFragment !== 'function') return 'fromFragment must be a function';
  if (typeof candidate.toFragment !== 'function') return 'toFragment must be a function';
  return undefined;
}
