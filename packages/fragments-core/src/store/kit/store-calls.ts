import type { ValidationIssue } from '../../errors/errors';
import type { Awaitable, ContextStoreDriver, StoreCall } from './context-store-driver';
import { LIVE_REPLY_METHODS } from './live-reply-methods';

// The wrapper's tables and checks: how each call is named, which driver methods the contract
// requires, which each optional ability brings, and what makes a driver unusable.

function call(method: string, argument: string, writes: boolean): StoreCall {
  return Object.freeze({ method, label: `${method}(${argument})`, writes });
}

/** The calls the wrapper makes, by contract method (`close` included). */
export type StoreCallName =
  | 'openChat'
  | 'getChat'
  | 'updateChat'
  | 'listChats'
  | 'deleteChat'
  | 'getHead'
  | 'commit'
  | 'append'
  | 'getChain'
  | 'getMessage'
  | 'findMessageNodes'
  | 'createBranch'
  | 'forkBranch'
  | 'renameBranch'
  | 'getBranch'
  | 'listBranches'
  | 'setActiveBranch'
  | 'createCheckpoint'
  | 'getCheckpoint'
  | 'listCheckpoints'
  | 'deleteCheckpoint'
  | 'getGraph'
  | 'getContext'
  | 'saveContext'
  | 'searchMessages'
  | 'prune'
  | 'close';

/** How each call is named in errors, and whether it writes (for `mapError`). */
export const CALLS: Readonly<Record<StoreCallName, StoreCall>> = {
  openChat: call('openChat', 'input', true),
  getChat: call('getChat', 'chatId', false),
  updateChat: call('updateChat', 'input', true),
  listChats: call('listChats', 'input', false),
  deleteChat: call('deleteChat', 'chatId', true),
  getHead: call('getHead', 'input', false),
  commit: call('commit', 'input', true),
  append: call('append', 'input', true),
  getChain: call('getChain', 'input', false),
  getMessage: call('getMessage', 'input', false),
  findMessageNodes: call('findMessageNodes', 'input', false),
  createBranch: call('createBranch', 'input', true),
  forkBranch: call('forkBranch', 'input', true),
  renameBranch: call('renameBranch', 'input', true),
  getBranch: call('getBranch', 'input', false),
  listBranches: call('listBranches', 'chatId', false),
  setActiveBranch: call('setActiveBranch', 'input', true),
  createCheckpoint: call('createCheckpoint', 'input', true),
  getCheckpoint: call('getCheckpoint', 'input', false),
  listCheckpoints: call('listCheckpoints', 'chatId', false),
  deleteCheckpoint: call('deleteCheckpoint', 'input', true),
  getGraph: call('getGraph', 'chatId', false),
  getContext: call('getContext', 'chatId', false),
  saveContext: call('saveContext', 'input', true),
  searchMessages: call('searchMessages', 'input', false),
  prune: call('prune', 'input', true),
  close: call('close', '', false),
};

const REQUIRED_METHODS = [
  'openChat',
  'getChat',
  'updateChat',
  'listChats',
  'deleteChat',
  'getHead',
  'commit',
  'getChain',
  'getMessage',
  'createBranch',
  'getBranch',
  'listBranches',
  'setActiveBranch',
  'createCheckpoint',
  'getCheckpoint',
  'listCheckpoints',
  'deleteCheckpoint',
  'getGraph',
] as const;

// Each optional ability and the driver methods it needs.
const OPTIONAL_ABILITIES = [
  ['append', ['append']],
  ['forkBranch', ['forkBranch']],
  ['renameBranch', ['renameBranch']],
  ['searchPrefix', ['searchMessages']],
  ['contextLane', ['getContext', 'saveContext']],
  ['search', ['searchMessages']],
  ['retention', ['prune']],
  ['messageVersions', ['findMessageNodes']],
  ['liveReplies', LIVE_REPLY_METHODS],
] as const;

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** `next(value)`, after `value` settles when it is a promise. */
export function andThen<T, R>(value: Awaitable<T>, next: (value: T) => R): Awaitable<R> {
  return isThenable(value) ? Promise.resolve(value).then(next) : next(value);
}

/** Problems of a driver that make it unusable, as validation issues. */
export function driverIssues(driver: ContextStoreDriver): ValidationIssue[] {
  if (typeof driver !== 'object' || driver === null)
    return [{ path: 'driver', message: 'expected an object' }];
  const issues: ValidationIssue[] = [];
  const record = driver as unknown as Record<string, unknown>;
  if (typeof driver.name !== 'string' || driver.name === '')
    issues.push({ path: 'name', message: 'expected a non-empty string' });
  const capabilities = driver.capabilities as unknown as Record<string, unknown> | undefined;
  if (typeof capabilities !== 'object' || capabilities === null) {
    issues.push({ path: 'capabilities', message: 'expected an object' });
  } else {
    for (const key of ['persistent', 'multiProcess']) {
      if (typeof capabilities[key] !== 'boolean')
        issues.push({ path: `capabilities.${key}`, message: 'expected a boolean' });
    }
    for (const [ability, methods] of OPTIONAL_ABILITIES) {
      const declared = capabilities[ability];
      if (declared !== undefined && typeof declared !== 'boolean') {
        issues.push({ path: `capabilities.${ability}`, message: 'expected a boolean or nothing' });
      }
      if (declared !== true) continue;
      for (const method of methods) {
        if (typeof record[method] !== 'function') {
          issues.push({
            path: method,
            message: `capabilities.${ability} is true, so the driver must have a ${method}() method`,
          });
        }
      }
    }
  }
  for (const method of REQUIRED_METHODS) {
    if (typeof record[method] !== 'function')
      issues.push({ path: method, message: 'expected a function' });
  }
  for (const method of ['close', 'mapError']) {
    if (record[method] !== undefined && typeof record[method] !== 'function')
      issues.push({ path: method, message: 'expected a function or nothing' });
  }
  const limit = driver.maxJsonBytes;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1))
    issues.push({ path: 'maxJsonBytes', message: 'expected a positive integer or nothing' });
  return issues;
}
