import { ValidationError, type ValidationIssue } from '../errors/errors';
import { describeValue } from '../rules/paths';
import type { ContextFragment } from './context-fragment';
import { isFragment } from './guards';

/**
 * Collects the problems in one builder call, then throws them together, each named by builder
 * and field: `policy(input): rule: expected a non-empty string, received number`.
 */
export class BuilderInput {
  readonly #builder: string;
  readonly #issues: ValidationIssue[] = [];

  constructor(builder: string) {
    this.#builder = builder;
  }

  /** A required string that is not blank. */
  text(path: string, value: unknown): string {
    if (typeof value === 'string' && value.trim() !== '') return value;
    const detail =
      typeof value === 'string' ? 'received an empty string' : `received ${describeValue(value)}`;
    this.#issues.push({ path, message: `expected a non-empty string, ${detail}` });
    return '';
  }

  /** An optional string: `undefined` is fine, anything else must be a non-empty string. */
  optionalText(path: string, value: unknown): string | undefined {
    return value === undefined ? undefined : this.text(path, value);
  }

  /** A list of non-empty strings with at least `minimum` items. */
  textList(path: string, value: unknown, minimum = 1): string[] {
    if (!Array.isArray(value)) {
      this.#issues.push({
        path,
        message: `expected an array of strings, received ${describeValue(value)}`,
      });
      return [];
    }
    if (value.length < minimum) {
      this.#issues.push({
        path,
        message: `expected at least ${minimum} item(s), received ${value.length}`,
      });
    }
    return value.map((item, index) => this.text(`${path}[${index}]`, item));
  }

  /** An optional list of strings. */
  optionalTextList(path: string, value: unknown): string[] | undefined {
    return value === undefined ? undefined : this.textList(path, value, 0);
  }

  /** The argument must be a plain object; returns it (or `{}` after recording the problem). */
  object(path: string, value: unknown): Record<string, unknown> {
    if (
      typeof value === 'object' &&
      value !== null &&
      !Array.isArray(value) &&
      !isFragment(value)
    ) {
      return value as Record<string, unknown>;
    }
    this.#issues.push({ path, message: `expected an object, received ${describeValue(value)}` });
    return {};
  }

  /**
   * An optional list whose items are fragments built by `allowedNames` builders, or plain strings
   * (kept as text). Anything else is a problem.
   */
  fragmentList(
    path: string,
    value: unknown,
    allowedNames: readonly string[],
  ): Array<ContextFragment | string> | undefined {
    if (value === undefined) return undefined;
    if (!Array.isArray(value)) {
      this.#issues.push({ path, message: `expected an array, received ${describeValue(value)}` });
      return undefined;
    }
    return value.map((item, index) => {
      if (isFragment(item) && allowedNames.includes(item.name)) return item;
      if (typeof item === 'string' && item.trim() !== '') return item;
      const received = isFragment(item) ? `a "${item.name}" fragment` : describeValue(item);
      this.#issues.push({
        path: `${path}[${index}]`,
        message: `expected a ${allowedNames.join(' or ')} fragment or a non-empty string, received ${received}`,
      });
      return '';
    });
  }

  /** Records a problem found by the caller. */
  problem(path: string, message: string): void {
    this.#issues.push({ path, message });
  }

  /** Throws one ValidationError listing every problem, if there were any. */
  done(): void {
    if (this.#issues.length === 0) return;
    const list = this.#issues.map((issue) =>
      issue.path ? `${issue.path}: ${issue.message}` : issue.message,
    );
    throw new ValidationError(`${this.#builder}: ${list.join('; ')}.`, { issues: this.#issues });
  }
}

/** Drops keys whose value is `undefined`, so optional fields leave no trace in data or JSON. */
export function compact<T extends Record<string, unknown>>(value: T): T {
  const result: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (entry !== undefined) result[key] = entry;
  }
  return result as T;
}
