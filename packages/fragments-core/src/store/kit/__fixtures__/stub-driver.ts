import type { ContextStore } from '../../context-store';
import type { BranchRecord, ChatRecord } from '../../records';
import type { ContextStoreDriver } from '../context-store-driver';

// A driver that records what it was called with and answers with fixed records, so each kit test
// is about what the wrapper does around it.

export const chat: ChatRecord = {
  id: 'c',
  userId: 'u',
  title: null,
  metadata: {},
  activeBranch: 'main',
  revision: 0,
  rewrittenAt: 0,
  createdAt: 1,
  updatedAt: 1,
};

export const branch: BranchRecord = {
  chatId: 'c',
  name: 'main',
  headMessageId: null,
  createdAt: 1,
  updatedAt: 1,
};

export type Calls = { method: string; argument: unknown }[];

/**
 * A stub of every required driver method (no `append`, no `forkBranch`: the kit's defaults),
 * recording each call in `calls`.
 */
export function stubDriver(
  overrides: Partial<ContextStoreDriver> = {},
  calls: Calls = [],
): {
  driver: ContextStoreDriver;
  calls: Calls;
} {
  const record =
    <T>(method: string, answer: T) =>
    (argument: unknown): T => {
      calls.push({ method, argument });
      return answer;
    };
  const lane = { chatId: 'c', fragments: [], revision: 0, updatedAt: null };
  const driver: ContextStoreDriver = {
    name: 'StubStore',
    capabilities: { persistent: false, multiProcess: false },
    openChat: record('openChat', { chat, branch, created: true }),
    getChat: record('getChat', chat),
    updateChat: record('updateChat', chat),
    listChats: record('listChats', [chat]),
    deleteChat: record('deleteChat', true),
    getHead: record('getHead', { revision: 0, headMessageId: null, rewrittenAt: 0 }),
    commit: record('commit', { headMessageId: 'm', revision: 1, rewrittenAt: 0, nodes: [] }),
    getChain: record('getChain', { nodes: [], nextCursor: null, reachedUntil: false }),
    getMessage: record('getMessage', null),
    findMessageNodes: record('findMessageNodes', []),
    createBranch: record('createBranch', branch),
    renameBranch: record('renameBranch', branch),
    getBranch: record('getBranch', branch),
    listBranches: record('listBranches', [branch]),
    setActiveBranch: record('setActiveBranch', branch),
    createCheckpoint: record('createCheckpoint', {
      chatId: 'c',
      name: 'p',
      messageId: 'm',
      createdAt: 1,
    }),
    getCheckpoint: record('getCheckpoint', null),
    listCheckpoints: record('listCheckpoints', []),
    deleteCheckpoint: record('deleteCheckpoint', false),
    getContext: record('getContext', lane),
    saveContext: record('saveContext', { ...lane, revision: 1, updatedAt: 1 }),
    getGraph: record('getGraph', { chat, nodes: [], branches: [branch], checkpoints: [] }),
    ...overrides,
  };
  return { driver, calls };
}

/** A commit entry of a user message. */
export function message(
  id: string,
  text: string = id,
): { id: string; message: { id: string; role: string; parts: { type: string; text: string }[] } } {
  return { id, message: { id, role: 'user', parts: [{ type: 'text', text }] } };
}

/** One valid call of every required method, with the label errors name it by. */
export const everyCall: readonly [string, (store: ContextStore) => Promise<unknown>][] = [
  ['openChat(input)', (store) => store.openChat({ chatId: 'c', userId: 'u' })],
  ['getChat(chatId)', (store) => store.getChat('c')],
  ['updateChat(input)', (store) => store.updateChat({ chatId: 'c', title: 't' })],
  ['listChats(input)', (store) => store.listChats({ userId: 'u' })],
  ['deleteChat(chatId)', (store) => store.deleteChat('c')],
  ['getHead(input)', (store) => store.getHead({ chatId: 'c', branch: 'main' })],
  [
    'commit(input)',
    (store) =>
      store.commit({ chatId: 'c', branch: 'main', expectedHeadId: null, messages: [message('m')] }),
  ],
  [
    'append(input)',
    (store) => store.append({ chatId: 'c', branch: 'main', messages: [message('m')] }),
  ],
  ['getChain(input)', (store) => store.getChain({ chatId: 'c', headMessageId: 'm' })],
  ['getMessage(input)', (store) => store.getMessage({ chatId: 'c', messageId: 'm' })],
  ['findMessageNodes(input)', (store) => store.findMessageNodes({ chatId: 'c', messageId: 'm' })],
  [
    'createBranch(input)',
    (store) => store.createBranch({ chatId: 'c', name: 'b', headMessageId: null }),
  ],
  [
    'forkBranch(input)',
    (store) => store.forkBranch({ chatId: 'c', from: 'main', headMessageId: null }),
  ],
  ['renameBranch(input)', (store) => store.renameBranch({ chatId: 'c', from: 'a', to: 'b' })],
  ['getBranch(input)', (store) => store.getBranch({ chatId: 'c', name: 'main' })],
  ['listBranches(chatId)', (store) => store.listBranches('c')],
  ['setActiveBranch(input)', (store) => store.setActiveBranch({ chatId: 'c', name: 'main' })],
  [
    'createCheckpoint(input)',
    (store) => store.createCheckpoint({ chatId: 'c', name: 'p', messageId: 'm' }),
  ],
  ['getCheckpoint(input)', (store) => store.getCheckpoint({ chatId: 'c', name: 'p' })],
  ['listCheckpoints(chatId)', (store) => store.listCheckpoints('c')],
  ['deleteCheckpoint(input)', (store) => store.deleteCheckpoint({ chatId: 'c', name: 'p' })],
  ['getContext(chatId)', (store) => store.getContext('c')],
  ['saveContext(input)', (store) => store.saveContext({ chatId: 'c', fragments: [] })],
  ['getGraph(chatId)', (store) => store.getGraph('c')],
];
