import { ValidationError } from '../../errors/errors';
import { assertIdentifier, identifierProblem } from '../../rules/identifiers';
import { nextBranchName } from '../branch-names';
import type {
  ChatPointerInput,
  CreateBranchInput,
  CreateCheckpointInput,
  ForkBranchInput,
  RenameBranchInput,
} from '../context-store';
import { assertInputObject, assertOptionalBoolean } from './input-checks';

// The pointers of a chat: branches (created, forked, renamed, read, activated) and checkpoints.
// Each prepare function reads every field once into a fresh object, flags defaulted.

/** `createBranch` input, checked. */
export interface PreparedCreateBranch {
  /** The chat id. */
  readonly chatId: string;
  /** The new branch's name. */
  readonly name: string;
  /** The node it starts at, or null for an empty branch. */
  readonly headMessageId: string | null;
  /** Make it the active branch in the same write. */
  readonly activate: boolean;
}

/** `forkBranch` input, checked. Pick the name with `forkBranchName(from, names)`. */
export interface PreparedForkBranch {
  /** The chat id. */
  readonly chatId: string;
  /** The branch the fork is named after (need not exist). */
  readonly from: string;
  /** The node it starts at, or null for an empty branch. */
  readonly headMessageId: string | null;
  /** Make it the active branch in the same write. */
  readonly activate: boolean;
}

/** `renameBranch` input, checked: valid names, `to` other than `from`. */
export interface PreparedRenameBranch {
  /** The chat id. */
  readonly chatId: string;
  /** The branch's current name. */
  readonly from: string;
  /** Its new name. */
  readonly to: string;
}

/** `createCheckpoint` input, checked. */
export interface PreparedCreateCheckpoint {
  /** The chat id. */
  readonly chatId: string;
  /** The checkpoint's name. */
  readonly name: string;
  /** The node it points at. */
  readonly messageId: string;
  /** Move an existing checkpoint of that name instead of refusing. */
  readonly replace: boolean;
}

/** Checks a `createBranch` input: ids, the head (or null), `activate`. */
export function prepareCreateBranch(input: CreateBranchInput): PreparedCreateBranch {
  const method = 'createBranch(input)';
  assertInputObject(method, input);
  const { chatId, name, headMessageId, activate } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'name', name);
  if (headMessageId !== null) assertIdentifier(method, 'headMessageId', headMessageId);
  assertOptionalBoolean(method, 'activate', activate);
  return { chatId, name, headMessageId, activate: activate === true };
}

/** Checks a `forkBranch` input: chat id, the name to fork from, the head (or null), `activate`. */
export function prepareForkBranch(input: ForkBranchInput): PreparedForkBranch {
  const method = 'forkBranch(input)';
  assertInputObject(method, input);
  const { chatId, from, headMessageId, activate } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'from', from);
  if (headMessageId !== null) assertIdentifier(method, 'headMessageId', headMessageId);
  assertOptionalBoolean(method, 'activate', activate);
  return { chatId, from, headMessageId, activate: activate === true };
}

/**
 * The name a `forkBranch` (or a fork-commit) creates: `nextBranchName(from, existing)`, checked
 * like any branch name. Call it where the store reads the chat's branch names, inside the write
 * that creates the fork. Throws a `ValidationError` naming `from` when the name would be too long
 * for an identifier (a `from` near the limit has no room for its `-vN` suffix).
 */
export function forkBranchName(from: string, existing: Iterable<string>): string {
  const name = nextBranchName(from, existing);
  const problem = identifierProblem(name);
  if (problem !== undefined) {
    throw new ValidationError(
      `forkBranch(input): the next fork of "${from}" would be named "${name}", which is not a valid branch name (${problem}). Nothing was created; fork from a shorter name or use createBranch with a name of your own.`,
      {
        issues: [{ path: 'from', message: 'the derived branch name is not a valid identifier' }],
      },
    );
  }
  return name;
}

/** Checks a `renameBranch` input: the chat id and both names valid, and `to` other than `from`. */
export function prepareRenameBranch(input: RenameBranchInput): PreparedRenameBranch {
  const method = 'renameBranch(input)';
  assertInputObject(method, input);
  const { chatId, from, to } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'from', from);
  assertIdentifier(method, 'to', to);
  if (from === to)
    throw new ValidationError(
      `${method}: to is "${to}", the branch's current name; give a new name. Nothing was written.`,
      { issues: [{ path: 'to', message: 'equals from' }] },
    );
  return { chatId, from, to };
}

/**
 * Checks the input of a method that names a branch or checkpoint (`getBranch`,
 * `setActiveBranch`, `getCheckpoint`, `deleteCheckpoint`): the chat id and the name.
 */
export function preparePointer(method: string, input: ChatPointerInput): ChatPointerInput {
  assertInputObject(method, input);
  const { chatId, name } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'name', name);
  return { chatId, name };
}

/** Checks a `createCheckpoint` input: ids and `replace`. */
export function prepareCreateCheckpoint(input: CreateCheckpointInput): PreparedCreateCheckpoint {
  const method = 'createCheckpoint(input)';
  assertInputObject(method, input);
  const { chatId, name, messageId, replace } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'name', name);
  assertIdentifier(method, 'messageId', messageId);
  assertOptionalBoolean(method, 'replace', replace);
  return { chatId, name, messageId, replace: replace === true };
}
