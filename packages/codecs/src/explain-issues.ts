import { describeValue, type ValidationIssue } from '@ctxgraph/fragments-core';
import { safeValidateUIMessages } from 'ai';

// Turns the AI SDK's validation error for one message into issues that name the real cause.
//
// The AI SDK checks a part against a union with one branch per part type (and per state for tool
// parts). When a part fails, zod either reports every branch (an `invalid_union`), or, when a
// single branch failed only on a soft check, that branch alone: a broken `dynamic-tool` part then
// reads `type: must start with "tool-"`, an unknown `{ type: 'bogus' }` or a `text` part that lacks
// its text reads `must start with "data-"`. So a failing part is explained from the branches meant
// for its type, found by asking the AI SDK itself (two probe validations, on the failure path
// only), not from a copy of its schema that could drift.
//
// AI SDK 7 checks parts with discriminated unions instead: a part whose `type` (or a tool part
// whose `state`) matches no option gets one `invalid_union` issue with no branches, naming the
// `discriminator` and its `options`; a part whose type matches is checked by that option alone,
// so its issues already name the wrong field. Both shapes are explained here, one path each.

interface ZodLikeIssue {
  readonly code?: string;
  readonly path?: readonly PropertyKey[];
  readonly message?: string;
  readonly expected?: string;
  readonly values?: readonly unknown[];
  readonly prefix?: string;
  readonly errors?: readonly (readonly ZodLikeIssue[])[];
  /** AI SDK 7's discriminated unions: the key that chose no option, and the options. */
  readonly discriminator?: string;
  readonly options?: readonly unknown[];
}

type Branches = readonly (readonly ZodLikeIssue[])[];

/** What one branch of the part union accepts as `type`: literals, or a prefix. */
interface BranchType {
  readonly literals: readonly string[];
  readonly prefix: string | undefined;
}

/**
 * The issues of a failed `safeValidateUIMessages` call for the message `candidate` at `index`,
 * each with its path from the list (`messages[2].parts[0].toolCallId`) and a message that says
 * what is wrong: an unknown part type with the known ones, a missing or invalid field, a state a
 * tool part cannot be in.
 */
export async function explainIssues(
  candidate: unknown,
  index: number,
  error: Error,
): Promise<ValidationIssue[]> {
  const raw = (error.cause as { issues?: readonly ZodLikeIssue[] } | undefined)?.issues;
  // Metadata and data-part schema failures say which field they are about; their issue paths are
  // relative to that field.
  const field = (error as { context?: { field?: unknown } }).context?.field;
  const base = typeof field === 'string' ? parsePath(field.replace(/^messages\[\d+\]\.?/, '')) : [];
  const issues: ValidationIssue[] = [];
  if (Array.isArray(raw)) {
    const explainedParts = new Set<number>();
    for (const issue of raw) {
      const path = relativePath(base, issue);
      const partIndex = base.length === 0 && path[0] === 'parts' ? path[1] : undefined;
      if (typeof partIndex === 'number') {
        // A part's own schema failed: explain the part once, from the branches meant for it.
        if (explainedParts.has(partIndex)) continue;
        explainedParts.add(partIndex);
        const ownIssues = raw.filter((other) => {
          const otherPath = relativePath(base, other);
          return otherPath[0] === 'parts' && otherPath[1] === partIndex;
        });
        issues.push(...(await explainPart(candidate, index, partIndex, ownIssues)));
      } else {
        collect(issue, base, candidate, index, issues);
      }
    }
  }
  if (issues.length === 0) issues.push({ path: `messages[${index}]`, message: error.message });
  return issues;
}

async function explainPart(
  candidate: unknown,
  index: number,
  partIndex: number,
  reported: readonly ZodLikeIssue[],
): Promise<ValidationIssue[]> {
  const out: ValidationIssue[] = [];
  const partPath: PropertyKey[] = ['parts', partIndex];
  const part = valueAt(candidate, partPath);
  const fallback = (): ValidationIssue[] => {
    for (const issue of reported) collect(issue, [], candidate, index, out);
    return out;
  };
  if (typeof part !== 'object' || part === null || Array.isArray(part)) return fallback();
  const schema = await partSchema();
  if (schema === undefined) return fallback();
  const type = (part as { type?: unknown }).type;
  const typePath = formatPath(index, [...partPath, 'type']);
  if (schema.kind === 'discriminated') {
    // AI SDK 7: the issues name the wrong field already, except an unknown type.
    const known = schema.known.join(', ');
    for (const issue of reported) {
      if (isDiscriminatorIssue(issue) && issue.discriminator === 'type') {
        out.push({ path: typePath, message: unknownTypeMessage(type, known) });
      } else {
        collect(issue, [], candidate, index, out);
      }
    }
    return out.length > 0 ? out : fallback();
  }
  const types = schema.types;
  const known = knownTypes(types);
  const accepting =
    typeof type === 'string'
      ? types.flatMap((branch, position) => (accepts(branch, type) ? [position] : []))
      : [];
  if (accepting.length === 0) {
    out.push({ path: typePath, message: unknownTypeMessage(type, known) });
    return out;
  }
  // With a number as its type every branch refuses the part outright, so zod reports all of them
  // instead of picking one; the rest of the part is checked as it is.
  const branches = await probeBranches({ ...part, type: 0 });
  if (branches === undefined || branches.length !== types.length) return fallback();
  const meant = accepting.map((position) =>
    (branches[position] ?? []).filter((issue) => !isAt(issue, 'type')),
  );
  explainBranches(meant, partPath, candidate, index, out);
  return out.length > 0 ? out : fallback();
}

function unknownTypeMessage(type: unknown, known: string): string {
  return typeof type === 'string'
    ? `unknown part type ${JSON.stringify(type)} (known: ${known})`
    : `expected a string part type (${known}), received ${describeValue(type)}`;
}

/**
 * Explains a part from the branches meant for its type: the one for its state when it has one
 * (tool parts), else which states exist and what every branch agrees is wrong besides the state.
 */
function explainBranches(
  branches: Branches,
  path: readonly PropertyKey[],
  candidate: unknown,
  index: number,
  out: ValidationIssue[],
): void {
  const forState = branches.filter((branch) => !branch.some((issue) => isAt(issue, 'state')));
  if (forState.length > 0) {
    for (const issue of fewestIssues(forState) ?? []) collect(issue, path, candidate, index, out);
    return;
  }
  const state = valueAt(candidate, [...path, 'state']);
  const states = knownValues(branches, 'state').join(', ');
  out.push({
    path: formatPath(index, [...path, 'state']),
    message:
      state === undefined
        ? `missing (expected one of ${states})`
        : `unknown state ${JSON.stringify(state)} (expected one of ${states})`,
  });
  const [first, ...rest] = branches;
  for (const issue of first ?? []) {
    if (isAt(issue, 'state')) continue;
    const key = issueKey(issue);
    if (rest.every((branch) => branch.some((other) => issueKey(other) === key))) {
      collect(issue, path, candidate, index, out);
    }
  }
}

function collect(
  issue: ZodLikeIssue,
  prefix: readonly PropertyKey[],
  candidate: unknown,
  index: number,
  out: ValidationIssue[],
): void {
  const path = relativePath(prefix, issue);
  if (isDiscriminatorIssue(issue)) {
    // AI SDK 7: the key at `path` (a tool part's `state`, say) matched none of the options.
    const value = valueAt(candidate, path);
    const options = issue.options.map((option) => JSON.stringify(option)).join(', ');
    out.push({
      path: formatPath(index, path),
      message:
        value === undefined
          ? `missing (expected one of ${options})`
          : `unknown ${issue.discriminator} ${JSON.stringify(value)} (expected one of ${options})`,
    });
    return;
  }
  if (issue.code === 'invalid_union' && Array.isArray(issue.errors)) {
    // A union that is not the part union (in a metadata schema, say): the branch that came
    // closest says the most.
    const closest = fewestIssues(issue.errors);
    if (closest !== undefined && closest.length > 0) {
      for (const inner of closest) collect(inner, path, candidate, index, out);
    } else {
      out.push({ path: formatPath(index, path), message: 'matches none of the accepted shapes' });
    }
    return;
  }
  out.push({ path: formatPath(index, path), message: describeIssue(issue, candidate, path) });
}

/** The issue's path from the message: a one-message validation puts the list position first. */
function relativePath(prefix: readonly PropertyKey[], issue: ZodLikeIssue): PropertyKey[] {
  const fullPath = [...prefix, ...(issue.path ?? [])];
  return prefix.length === 0 && fullPath[0] === 0 ? fullPath.slice(1) : fullPath;
}

/** The issue's message, said plainly when a field is missing or must not be there. */
function describeIssue(
  issue: ZodLikeIssue,
  candidate: unknown,
  path: readonly PropertyKey[],
): string {
  if (issue.code === 'invalid_type') {
    const value = valueAt(candidate, path);
    if (issue.expected === 'never') {
      const state = valueAt(candidate, [...path.slice(0, -1), 'state']);
      return typeof state === 'string'
        ? `not allowed when state is ${JSON.stringify(state)} (received ${describeValue(value)})`
        : `not allowed here (received ${describeValue(value)})`;
    }
    if (value === undefined) {
      return issue.expected === undefined || issue.expected === 'nonoptional'
        ? 'missing (required)'
        : `missing (expected ${issue.expected})`;
    }
  }
  return issue.message ?? 'invalid';
}

/** A discriminated union's issue (AI SDK 7): no branches, the key and its options instead. */
function isDiscriminatorIssue(
  issue: ZodLikeIssue,
): issue is ZodLikeIssue & { discriminator: string; options: readonly unknown[] } {
  return (
    issue.code === 'invalid_union' &&
    typeof issue.discriminator === 'string' &&
    Array.isArray(issue.options)
  );
}

/**
 * How the AI SDK's part union reports a failing part: branch by branch (AI SDK 6), with what each
 * branch accepts as `type`, or as a discriminated union (AI SDK 7), with the part types it knows.
 */
type PartSchema =
  | { readonly kind: 'branches'; readonly types: readonly BranchType[] }
  | { readonly kind: 'discriminated'; readonly known: readonly string[] };

let partSchemaProbe: Promise<PartSchema | undefined> | undefined;

/**
 * The shape of the AI SDK's part union, learnt once from a part whose type nothing accepts: each
 * branch then reports its literal or prefix (AI SDK 6), or the union names its options (AI SDK 7).
 */
function partSchema(): Promise<PartSchema | undefined> {
  partSchemaProbe ??= probeUnion({ type: '\u0000' }).then(
    async (union): Promise<PartSchema | undefined> => {
      if (union === undefined) return undefined;
      if (isDiscriminatorIssue(union)) return discriminatedSchema(union.options);
      const branches: Branches | undefined = union.errors;
      if (branches === undefined || branches.length === 0) return undefined;
      const types = branches.map((branch): BranchType => {
        const issue = branch.find((inner) => isAt(inner, 'type'));
        const literals =
          issue?.code === 'invalid_value' && Array.isArray(issue.values)
            ? issue.values.filter((value): value is string => typeof value === 'string')
            : [];
        const prefix =
          issue?.code === 'invalid_format' && typeof issue.prefix === 'string'
            ? issue.prefix
            : undefined;
        return { literals, prefix };
      });
      // Every branch must have said what it accepts, or the answer cannot be trusted.
      return types.every((type) => type.literals.length > 0 || type.prefix !== undefined)
        ? { kind: 'branches', types }
        : undefined;
    },
  );
  return partSchemaProbe;
}

/**
 * The part types of a discriminated part union: its literal options, then the types it routes
 * before the union (the UIMessage type's `data-<name>`, `dynamic-tool` and `tool-<name>`), each
 * kept only when the AI SDK really accepts it as a type.
 */
async function discriminatedSchema(options: readonly unknown[]): Promise<PartSchema> {
  const known = options.flatMap((option) =>
    typeof option === 'string' ? [JSON.stringify(option)] : [],
  );
  const routed: readonly (readonly [probe: string, shown: string])[] = [
    ['data-\u0000', 'data-<name>'],
    ['dynamic-tool', 'dynamic-tool'],
    ['tool-\u0000', 'tool-<name>'],
  ];
  for (const [probe, shown] of routed) {
    const union = await probeUnion({ type: probe });
    const refused = union !== undefined && isDiscriminatorIssue(union) && isAt(union, 'type');
    if (!refused) known.push(JSON.stringify(shown));
  }
  return { kind: 'discriminated', known };
}

/** The part union's issue for `part` (at the part, or at its `type`), if it fails as a union. */
async function probeUnion(part: object): Promise<ZodLikeIssue | undefined> {
  const result = await safeValidateUIMessages({
    messages: [{ id: 'probe', role: 'assistant', parts: [part] }],
  });
  if (result.success) return undefined;
  const issues = (result.error.cause as { issues?: readonly ZodLikeIssue[] } | undefined)?.issues;
  const union = issues?.find((issue) => issue.code === 'invalid_union');
  if (union === undefined) return undefined;
  // Paths here are from the message list: [0, 'parts', 0, ...]; make them relative to the part.
  return { ...union, path: (union.path ?? []).slice(4) };
}

/**
 * The branch-by-branch issues of the part union for `part`, or undefined when zod did not report
 * them branch by branch.
 */
async function probeBranches(part: object): Promise<Branches | undefined> {
  const union = await probeUnion(part);
  return Array.isArray(union?.errors) && union.errors.length > 0 ? union.errors : undefined;
}

function accepts(branch: BranchType, type: string): boolean {
  return (
    branch.literals.includes(type) ||
    (branch.prefix !== undefined && type.startsWith(branch.prefix))
  );
}

function knownTypes(types: readonly BranchType[]): string {
  const known = new Set<string>();
  for (const branch of types) {
    for (const literal of branch.literals) known.add(JSON.stringify(literal));
    if (branch.prefix !== undefined) known.add(JSON.stringify(`${branch.prefix}<name>`));
  }
  return [...known].join(', ');
}

/** The literals the branches accept at `key` (the states of a tool part). */
function knownValues(branches: Branches, key: string): string[] {
  const known = new Set<string>();
  for (const branch of branches) {
    const issue = branch.find((inner) => isAt(inner, key));
    if (issue?.code === 'invalid_value' && Array.isArray(issue.values)) {
      for (const value of issue.values) known.add(JSON.stringify(value));
    }
  }
  return [...known];
}

function isAt(issue: ZodLikeIssue, key: string): boolean {
  return issue.path?.length === 1 && issue.path[0] === key;
}

function issueKey(issue: ZodLikeIssue): string {
  return `${issue.code}|${(issue.path ?? []).map(String).join('.')}|${issue.message}`;
}

function fewestIssues(branches: Branches): readonly ZodLikeIssue[] | undefined {
  let best: readonly ZodLikeIssue[] | undefined;
  for (const branch of branches) {
    if (best === undefined || branch.length < best.length) best = branch;
  }
  return best;
}

function parsePath(text: string): PropertyKey[] {
  const keys: PropertyKey[] = [];
  for (const match of text.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    keys.push(match[2] === undefined ? (match[1] as string) : Number(match[2]));
  }
  return keys;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

function formatPath(index: number, path: readonly PropertyKey[]): string {
  let text = `messages[${index}]`;
  for (const key of path) text += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  return text;
}
