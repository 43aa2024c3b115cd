import { joinPath, type ValidationIssue } from '@ctxgraph/fragments-core';
import type { z } from 'zod';
import { describeKind } from './describe-kind';

type ZodIssue = z.core.$ZodIssue;

/**
 * Turns zod's issues into ctxgraph issues with readable paths below `base` and short messages
 * (`expected string, received number`), so one error lists every problem where it is.
 */
export function issuesFromZod(issues: readonly ZodIssue[], base: string): ValidationIssue[] {
  const result: ValidationIssue[] = [];
  for (const issue of issues) collect(issue, base, result);
  return result;
}

function pathOf(base: string, path: readonly PropertyKey[]): string {
  let current = base;
  for (const segment of path) {
    current = joinPath(current, typeof segment === 'symbol' ? String(segment) : segment);
  }
  return current;
}

function collect(issue: ZodIssue, base: string, result: ValidationIssue[]): void {
  const path = pathOf(base, issue.path);
  switch (issue.code) {
    case 'invalid_type': {
      const message =
        issue.input === undefined
          ? `missing (expected ${issue.expected})`
          : `expected ${issue.expected}, received ${describeKind(issue.input)}`;
      result.push({ path, message });
      return;
    }
    case 'unrecognized_keys':
      for (const key of issue.keys) {
        result.push({
          path: joinPath(path, key),
          message: 'unknown field (not part of this format)',
        });
      }
      return;
    case 'invalid_value': {
      const expected = issue.values.map((value) => JSON.stringify(value)).join(' or ');
      const received =
        typeof issue.input === 'string' ? JSON.stringify(issue.input) : describeKind(issue.input);
      result.push({ path, message: `expected ${expected}, received ${received}` });
      return;
    }
    case 'invalid_union': {
      // A union such as "a policy object or a string" reports one list of issues per branch. The
      // branches that failed only because the value is of another kind say nothing useful; when
      // exactly one branch fits the value's kind, its own issues are the real problems.
      const fitting = issue.errors.filter((branch) => !branch.every(isKindMismatch));
      if (fitting.length === 1 && fitting[0]) {
        for (const inner of fitting[0]) collect(inner, path, result);
        return;
      }
      result.push({ path, message: `${issue.message}, received ${describeKind(issue.input)}` });
      return;
    }
    case 'invalid_key':
      // A record key that failed its own schema: report that schema's problems at the key.
      for (const inner of issue.issues) collect(inner, path, result);
      return;
    default:
      result.push({ path, message: issue.message });
  }
}

function isKindMismatch(issue: ZodIssue): boolean {
  return issue.path.length === 0 && issue.code === 'invalid_type';
}
