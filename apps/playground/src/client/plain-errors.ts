import type { ValidationIssue } from '@ctxgraph/fragments-core';

/** A failure as the page tells it: a short title and a sentence that says what to do. */
export interface PlainError {
  readonly title: string;
  readonly message: string;
}

/** What {@link plainError} reads of a failure (an `ApiError`, or any error). */
export interface ErrorFacts {
  /** The error class name the server sent (`OwnershipError`, …), or the JavaScript error's name. */
  readonly errorName: string;
  /** The library's own message. */
  readonly message: string;
  /** Each problem with its path, for validation errors. */
  readonly issues?: readonly ValidationIssue[];
}

/** The first quoted name in a library message (`Checkpoint "x" already exists …` → `x`). */
function quoted(message: string): string | null {
  return /"([^"]+)"/.exec(message)?.[1] ?? null;
}

/** `fragments[2].definition` → `fragment 3, field “definition”`; other paths unchanged. */
export function plainPath(path: string): string {
  const match = /^fragments\[(\d+)\](.*)$/.exec(path);
  if (!match) return path === 'fragments' ? 'the context' : `“${path}”`;
  const where = `fragment ${Number(match[1]) + 1}`;
  const rest = (match[2] ?? '').replace(/^\./, '');
  if (rest === '') return where;
  return `${where}, field “${rest.replace(/\[(\d+)\]/g, (_, index: string) => ` ${Number(index) + 1}`).replace(/\./g, ' › ')}”`;
}

/** Drops what only a library user can act on: chat ids, option names, method prefixes. */
function tidy(message: string): string {
  return message
    .replace(/\s*(?:in|of) chat "[^"]+"/g, '')
    .replace(/\bChat "[^"]+"/g, 'This chat')
    .replace(/\s*Delete it first or pass \{ replace: true \} to move it\./g, '')
    .replace(/^[a-zA-Z]+\([^)]*\):\s*/, '')
    .replace(/\btoFragment:\s*/g, '')
    .trim();
}

/**
 * Says what went wrong in the user's words: the library's errors are written for developers
 * (`… pass { replace: true } to move it.`, `fragments[0]: toFragment: …`, internal chat ids),
 * the page speaks to a person using it.
 */
export function plainError(facts: ErrorFacts): PlainError {
  const name = quoted(facts.message);
  switch (facts.errorName) {
    case 'OwnershipError':
      return {
        title: 'Not your chat',
        message:
          'This chat belongs to another user, so it cannot be opened as you. Switch back to its owner, or pick one of your chats on the left.',
      };
    case 'ChatNotFoundError':
      return {
        title: 'Chat not found',
        message: 'This chat does not exist (it may have been deleted). Pick another on the left.',
      };
    case 'BranchNotFoundError':
      return {
        title: 'Branch not found',
        message: `There is no branch${name ? ` “${name}”` : ''} in this chat any more. Pick one from the branch list.`,
      };
    case 'CheckpointNotFoundError':
      return {
        title: 'Checkpoint not found',
        message: `There is no checkpoint${name ? ` “${name}”` : ''} in this chat any more.`,
      };
    case 'MessageNotFoundError':
      return {
        title: 'Message not found',
        message: 'That message is not in this chat any more. Reload the chat and try again.',
      };
    case 'CheckpointExistsError':
      return {
        title: 'Name taken',
        message: `A checkpoint named${name ? ` “${name}”` : ' so'} already exists in this chat. Pick another name.`,
      };
    case 'BranchExistsError':
      return {
        title: 'Name taken',
        message: `A branch named${name ? ` “${name}”` : ' so'} already exists in this chat. Pick another name.`,
      };
    case 'HeadConflictError':
    case 'ContextConflictError':
      return {
        title: 'Changed meanwhile',
        message:
          'Someone else changed this chat at the same moment, so nothing was saved. Reload the chat and try again.',
      };
    case 'NetworkError':
      return {
        title: 'Server unreachable',
        message: 'The playground server did not answer. Is it still running?',
      };
    case 'ModelError':
      return {
        title: 'The model failed',
        message: `The model did not finish its reply (${tidy(facts.message)}). Your message is saved; try again.`,
      };
  }
  const issues = facts.issues ?? [];
  if (issues.length > 0) {
    const list = issues.map((issue) => `${plainPath(issue.path)}: ${tidy(issue.message)}`);
    return {
      title: 'Not accepted',
      message:
        `${list.slice(0, 3).join('; ')}${list.length > 3 ? ` (and ${list.length - 3} more)` : ''}.`.replace(
          /\.\.$/,
          '.',
        ),
    };
  }
  if (facts.errorName === 'EngineError' && /no saved message yet/.test(facts.message)) {
    return {
      title: 'Nothing to checkpoint yet',
      message: 'This branch has no message yet: send one first.',
    };
  }
  return { title: 'Something went wrong', message: tidy(facts.message) };
}
