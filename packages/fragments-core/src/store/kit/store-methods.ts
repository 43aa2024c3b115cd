import type { ValidationIssue } from '../../errors/errors';
import type { ContextStoreCapabilities } from '../capabilities';
import {
  OPTIONAL_CAPABILITIES,
  OPTIONAL_CAPABILITY_METHODS,
  REQUIRED_STORE_METHODS,
} from '../capabilities';
import type { ChatPointerInput, ContextStore } from '../context-store';
import type { ChatRecord, Page } from '../records';
import type { SearchHit } from '../search';
import {
  chatCursor,
  prepareChatId,
  prepareListChats,
  prepareOpenChat,
  prepareSaveContext,
  prepareUpdateChat,
} from './chat-input';
import { prepareAppend, prepareCommit } from './commit-input';
import type {
  Awaitable,
  ContextStoreDriver,
  DriverMethodName,
  DriverResult,
  KitDefaultedMethod,
  PreparedInputs,
  StoreCall,
} from './context-store-driver';
import type { StoreInputOptions } from './input-checks';
import {
  prepareAppendReplyChunks,
  prepareEndReply,
  prepareReadReply,
  prepareStartReply,
  prepareStopReply,
  prepareTakeOverReply,
} from './live-reply-input';
import {
  prepareCreateBranch,
  prepareCreateCheckpoint,
  prepareForkBranch,
  preparePointer,
  prepareRenameBranch,
} from './pointer-input';
import {
  prepareFindMessageNodes,
  prepareGetChain,
  prepareGetHead,
  prepareGetMessage,
} from './read-input';
import { preparePrune } from './retention-input';
import { prepareSearch, type SearchMatch, searchCursor, searchHit } from './search-input';

// The wrapper's table: for each contract method a driver serves, how the call is named in errors,
// whether it writes, how its input is prepared and, where the driver answers something else than
// the contract returns, how the answer is finished. `CheckedContextStore` defines one method per
// row; nothing else lists the methods.

/** What the contract method `Name` takes. */
type StoreInput<Name extends DriverMethodName> = Parameters<NonNullable<ContextStore[Name]>>[0];

/** What the contract method `Name` returns (awaited). */
type StoreResult<Name extends DriverMethodName> = Awaited<
  ReturnType<NonNullable<ContextStore[Name]>>
>;

/** One row of {@link STORE_METHODS}. */
export interface StoreMethod<Name extends DriverMethodName> {
  /** How errors name the call, and whether it writes. */
  readonly call: StoreCall;
  /** Checks the caller's input and builds what the driver receives. */
  readonly prepare: (input: StoreInput<Name>, options: StoreInputOptions) => PreparedInputs[Name];
  /** Turns the driver's answer into the contract's result; the answer as it is when absent. */
  readonly finish?: (
    result: DriverResult<Name>,
    prepared: PreparedInputs[Name],
  ) => StoreResult<Name>;
}

function call(method: string, argument: string, writes: boolean): StoreCall {
  return Object.freeze({ method, label: `${method}(${argument})`, writes });
}

/** A method whose one argument is a chat id. */
function byChatId(
  method: string,
  writes: boolean,
): { readonly call: StoreCall; readonly prepare: (chatId: string) => string } {
  const storeCall = call(method, 'chatId', writes);
  return { call: storeCall, prepare: (chatId) => prepareChatId(storeCall.label, chatId) };
}

/** A method that names a branch or a checkpoint of a chat. */
function byPointer(
  method: string,
  writes: boolean,
): { readonly call: StoreCall; readonly prepare: (input: ChatPointerInput) => ChatPointerInput } {
  const storeCall = call(method, 'input', writes);
  return { call: storeCall, prepare: (input) => preparePointer(storeCall.label, input) };
}

/** The contract methods a driver serves, by name. */
export const STORE_METHODS: { readonly [Name in DriverMethodName]: StoreMethod<Name> } = {
  openChat: { call: call('openChat', 'input', true), prepare: prepareOpenChat },
  getChat: byChatId('getChat', false),
  updateChat: { call: call('updateChat', 'input', true), prepare: prepareUpdateChat },
  listChats: {
    call: call('listChats', 'input', false),
    prepare: prepareListChats,
    finish: (chats, query): Page<ChatRecord> => {
      const items = chats.slice(0, query.limit);
      const last = items.at(-1);
      return {
        items,
        nextCursor: chats.length > query.limit && last !== undefined ? chatCursor(last) : null,
      };
    },
  },
  deleteChat: byChatId('deleteChat', true),
  getHead: { call: call('getHead', 'input', false), prepare: prepareGetHead },
  commit: { call: call('commit', 'input', true), prepare: prepareCommit },
  append: { call: call('append', 'input', true), prepare: prepareAppend },
  getChain: { call: call('getChain', 'input', false), prepare: prepareGetChain },
  getMessage: { call: call('getMessage', 'input', false), prepare: prepareGetMessage },
  findMessageNodes: {
    call: call('findMessageNodes', 'input', false),
    prepare: prepareFindMessageNodes,
  },
  createBranch: { call: call('createBranch', 'input', true), prepare: prepareCreateBranch },
  forkBranch: { call: call('forkBranch', 'input', true), prepare: prepareForkBranch },
  renameBranch: { call: call('renameBranch', 'input', true), prepare: prepareRenameBranch },
  getBranch: byPointer('getBranch', false),
  listBranches: byChatId('listBranches', false),
  setActiveBranch: byPointer('setActiveBranch', true),
  createCheckpoint: {
    call: call('createCheckpoint', 'input', true),
    prepare: prepareCreateCheckpoint,
  },
  getCheckpoint: byPointer('getCheckpoint', false),
  listCheckpoints: byChatId('listCheckpoints', false),
  deleteCheckpoint: byPointer('deleteCheckpoint', true),
  getContext: byChatId('getContext', false),
  saveContext: { call: call('saveContext', 'input', true), prepare: prepareSaveContext },
  getGraph: byChatId('getGraph', false),
  searchMessages: {
    call: call('searchMessages', 'input', false),
    prepare: (input, options) => prepareSearch(input, options.searchPrefix === true),
    finish: (matches, query): Page<SearchHit> => ({
      items: matches
        .slice(0, query.limit)
        .map((match) => searchHit(match, query.terms, query.prefix)),
      nextCursor:
        matches.length > query.limit
          ? searchCursor(query, matches[query.limit - 1] as SearchMatch)
          : null,
    }),
  },
  prune: { call: call('prune', 'input', true), prepare: preparePrune },
  startReply: {
    call: call('startReply', 'input', true),
    prepare: (input, options) => prepareStartReply(input, options.maxJsonBytes),
  },
  appendReplyChunks: {
    call: call('appendReplyChunks', 'input', true),
    prepare: (input, options) => prepareAppendReplyChunks(input, options.maxJsonBytes),
  },
  readReply: { call: call('readReply', 'input', false), prepare: prepareReadReply },
  getLiveState: byChatId('getLiveState', false),
  stopReply: { call: call('stopReply', 'input', true), prepare: prepareStopReply },
  takeOverReply: { call: call('takeOverReply', 'input', true), prepare: prepareTakeOverReply },
  endReply: { call: call('endReply', 'input', true), prepare: prepareEndReply },
};

/** How errors name `close()`. */
export const CLOSE_CALL: StoreCall = call('close', '', false);

/** How errors name `watchChat` (synchronous: it returns the unsubscribe function). */
export const WATCH_CHAT_CALL: StoreCall = call('watchChat', 'chatId, listener', false);

/** The methods the kit provides when a driver has none. */
const KIT_DEFAULTED: readonly KitDefaultedMethod[] = ['append', 'forkBranch'];

/**
 * The driver methods a store over a driver with `capabilities` serves through the table: every
 * required method (`close` apart) and the methods of each optional capability declared
 * (`watchChat` apart: it is synchronous, see `live-reply-methods.ts`).
 */
export function servedMethods(capabilities: ContextStoreCapabilities): DriverMethodName[] {
  const names = new Set<string>(REQUIRED_STORE_METHODS);
  names.delete('close');
  for (const capability of OPTIONAL_CAPABILITIES) {
    if (capabilities[capability] !== true) continue;
    for (const method of OPTIONAL_CAPABILITY_METHODS[capability]) names.add(method);
  }
  names.delete('watchChat');
  return [...names] as DriverMethodName[];
}

/**
 * The flags of earlier drafts of the contract naming abilities every v1 store now has. A driver
 * that still declares one is told so, rather than have the flag read as an opt-out it is not.
 */
const REQUIRED_ABILITY_FLAGS: readonly string[] = [
  'append',
  'forkBranch',
  'renameBranch',
  'contextLane',
  'engineRecords',
  'messageVersions',
];

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
    for (const flag of REQUIRED_ABILITY_FLAGS) {
      if (flag in capabilities)
        issues.push({
          path: `capabilities.${flag}`,
          message: `not a capability of contract v1: every store serves ${flag === 'contextLane' ? 'the context lane' : flag}; remove the flag`,
        });
    }
    for (const capability of OPTIONAL_CAPABILITIES) {
      const declared = capabilities[capability];
      if (declared !== undefined && typeof declared !== 'boolean') {
        issues.push({
          path: `capabilities.${capability}`,
          message: 'expected a boolean or nothing',
        });
      }
      if (declared !== true) continue;
      for (const method of OPTIONAL_CAPABILITY_METHODS[capability]) {
        if (typeof record[method] !== 'function') {
          issues.push({
            path: method,
            message: `capabilities.${capability} is true, so the driver must have a ${method}() method`,
          });
        }
      }
    }
    if (capabilities.searchPrefix === true && capabilities.search !== true)
      issues.push({
        path: 'capabilities.searchPrefix',
        message: 'needs capabilities.search (prefix matching is a kind of search)',
      });
  }
  for (const method of REQUIRED_STORE_METHODS) {
    if (method === 'close' || (KIT_DEFAULTED as readonly string[]).includes(method)) continue;
    if (typeof record[method] !== 'function')
      issues.push({ path: method, message: 'expected a function: every v1 store serves it' });
  }
  for (const method of [...KIT_DEFAULTED, 'close', 'mapError']) {
    if (record[method] !== undefined && typeof record[method] !== 'function')
      issues.push({ path: method, message: 'expected a function or nothing' });
  }
  const limit = driver.maxJsonBytes;
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1))
    issues.push({ path: 'maxJsonBytes', message: 'expected a positive integer or nothing' });
  return issues;
}

/** True for a value with a `then` method. */
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
