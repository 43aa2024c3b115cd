import { ValidationError, type ValidationIssue } from '../errors/errors';
import type { JsonObject } from '../json';
import { isWellFormed, stringProblem } from './identifiers';
import { MAX_JSON_DEPTH } from './limits';

// What JSON a store keeps: plain objects, arrays, finite numbers, strings without NUL or lone
// surrogates, nested at most MAX_JSON_DEPTH levels, no cycles, no class instances.

/** Checks that `value` is a plain JSON object (for metadata). */
export function assertJsonObject(
  method: string,
  field: string,
  value: unknown,
): asserts value is JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError(`${method}: ${field} must be a plain JSON object.`, {
      issues: [{ path: field, message: 'expected an object' }],
    });
  }
  const issues: ValidationIssue[] = [];
  collectJsonIssues(value, field, issues, []);
  if (issues.length > 0) throw jsonError(method, issues);
}

/**
 * The problems that keep `value` from being stored as JSON (see {@link toJsonText}), each with
 * its path under `field`; empty when it is storable. At most 50 are listed.
 */
export function jsonIssues(value: unknown, field: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  collectJsonIssues(value, field, issues, []);
  return issues;
}

/**
 * Serializes a value to JSON, refusing what would not come back the same: functions, symbols,
 * bigints, non-finite numbers, class instances, cycles, and strings with NUL. Keys holding
 * `undefined` are dropped (as JSON does).
 */
export function toJsonText(method: string, field: string, value: unknown): string {
  const issues: ValidationIssue[] = [];
  collectJsonIssues(value, field, issues, []);
  if (issues.length > 0) throw jsonError(method, issues);
  return JSON.stringify(value);
}

/**
 * Adds the problems that keep `value` from being stored as JSON to `issues`, each path under the
 * field `field()` names (asked only when there is a problem: a message of a large batch is
 * checked without building its path). Shares the cap of 50 problems with what `issues` holds.
 */
export function addJsonIssues(
  value: unknown,
  issues: ValidationIssue[],
  field: () => string,
): void {
  if (isStorableJson(value, 0)) return;
  collectFrom(value, { field: field(), keys: [], issues, ancestors: [] });
}

function jsonError(method: string, issues: ValidationIssue[]): ValidationError {
  const shown = issues.slice(0, 5).map((issue) => `${issue.path}: ${issue.message}`);
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : '';
  return new ValidationError(`${method}: not storable as JSON: ${shown.join('; ')}${more}.`, {
    issues,
  });
}

// One walk over a value, allocating nothing unless it finds a problem: the path of a problem is
// built from the stack of keys only when one is reported. Recursion is bounded by MAX_JSON_DEPTH.
function collectJsonIssues(
  value: unknown,
  field: string,
  issues: ValidationIssue[],
  ancestors: object[],
): void {
  if (isStorableJson(value, ancestors.length)) return;
  collectFrom(value, { field, keys: [], issues, ancestors });
}

/**
 * Whether `value` is storable JSON, by the rules {@link collectFrom} reports on, answered without
 * allocating: no key path, no list of ancestors. A cycle needs no list either: it nests without
 * end, so it fails the depth rule. Every value is checked this way first and walked again, with
 * paths, only when it fails (an input with a problem is rare; a batch of 10,000 good messages is
 * not).
 */
function isStorableJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
      return !value.includes('\u0000') && isWellFormed(value);
    case 'boolean':
    case 'undefined':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (depth >= MAX_JSON_DEPTH) return false;
      if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index += 1) {
          const item: unknown = value[index];
          if (item === undefined || !isStorableJson(item, depth + 1)) return false;
        }
        return true;
      }
      const prototype = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return false;
      const record = value as Record<string, unknown>;
      for (const key in record) {
        if (!Object.hasOwn(record, key)) continue;
        if (!isGoodKey(key) || !isStorableJson(record[key], depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

// Keys already found good: the few that every message repeats (`type`, `text`, `state`, …) are
// checked once. Bounded (256 keys of at most 64 characters), so keys from data cannot grow it.
const goodKeys = new Set<string>();

function isGoodKey(key: string): boolean {
  if (goodKeys.has(key)) return true;
  if (key.includes('\u0000') || !isWellFormed(key)) return false;
  if (goodKeys.size < 256 && key.length <= 64) goodKeys.add(key);
  return true;
}

/** The state of one walk: where it started, the keys down to the current value, what it found. */
interface JsonWalk {
  readonly field: string;
  readonly keys: Array<string | number>;
  readonly issues: ValidationIssue[];
  readonly ancestors: object[];
}

function walkPath(walk: JsonWalk, extra?: string | number): string {
  let path = walk.field;
  const keys = extra === undefined ? walk.keys : [...walk.keys, extra];
  for (const key of keys) path = typeof key === 'number' ? `${path}[${key}]` : `${path}.${key}`;
  return path;
}

function report(walk: JsonWalk, message: string, extra?: string | number): void {
  walk.issues.push({ path: walkPath(walk, extra), message });
}

function collectFrom(value: unknown, walk: JsonWalk): void {
  if (walk.issues.length >= 50) return;
  switch (typeof value) {
    case 'string': {
      const problem = stringProblem(value);
      if (problem !== undefined) report(walk, problem);
      return;
    }
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) report(walk, `${value} is not a finite number`);
      return;
    case 'undefined':
      return;
    case 'object': {
      if (value === null) return;
      const ancestors = walk.ancestors;
      if (ancestors.includes(value)) {
        report(walk, 'cycle (the value contains itself)');
        return;
      }
      if (ancestors.length >= MAX_JSON_DEPTH) {
        report(walk, `nested deeper than ${MAX_JSON_DEPTH} levels`);
        return;
      }
      const isArray = Array.isArray(value);
      const prototype = Object.getPrototypeOf(value);
      if (!isArray && prototype !== Object.prototype && prototype !== null) {
        const name = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object';
        report(walk, `${name} instance is not plain JSON`);
        return;
      }
      ancestors.push(value);
      const keys = walk.keys;
      if (isArray) {
        const items = value as unknown[];
        for (let index = 0; index < items.length; index += 1) {
          const item = items[index];
          if (item === undefined) {
            // A hole of a sparse array is no undefined item: JSON writes it as null.
            if (index in items) report(walk, 'undefined in an array', index);
            continue;
          }
          keys.push(index);
          collectFrom(item, walk);
          keys.pop();
        }
      } else {
        const record = value as Record<string, unknown>;
        // for…in over own keys: Object.keys's order without allocating its array.
        for (const key in record) {
          if (!Object.hasOwn(record, key)) continue;
          if (key.includes('\u0000') || !isWellFormed(key)) {
            report(walk, 'a key contains the NUL character or a lone surrogate');
          }
          keys.push(key);
          collectFrom(record[key], walk);
          keys.pop();
        }
      }
      ancestors.pop();
      return;
    }
    default:
      report(walk, `${typeof value} is not JSON`);
  }
}
