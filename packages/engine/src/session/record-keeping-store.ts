import {
  type AppendInput,
  type AppendResult,
  type ChainPage,
  type ChatGraph,
  type CommitInput,
  type CommitResult,
  type ContextStore,
  type ContextStoreCapabilities,
  embedEngineRecord,
  type MessageNodeRecord,
  type Page,
  type SearchHit,
  splitEngineRecord,
  withoutEngineMetadata,
} from '@ctxgraph/fragments-core';
import { keepsEngineRecords } from './store-abilities';

/**
 * The store as the engine uses it: every node it reads has the engine's record beside the
 * message (`engineRecord`) and no `metadata.ctxgraph` in the message, whatever the store.
 *
 * - A store that declares `engineRecords` keeps records itself: writes pass through; a node it
 *   returns whose message still holds `metadata.ctxgraph` (data stored by an earlier version) is
 *   read as that record (the read-time upgrade).
 * - Any other v1 store gets each record inside the message's `metadata.ctxgraph` on write, and
 *   the engine splits it out again on every read, so the app never sees it either way.
 *
 * Only the engine writes records: `set()` drops a `metadata.ctxgraph` key from what an app gives.
 */
export class RecordKeepingStore implements ContextStore {
  readonly specificationVersion: 'v1' = 'v1';
  readonly capabilities: ContextStoreCapabilities;
  readonly append?: ContextStore['append'];
  readonly forkBranch?: ContextStore['forkBranch'];
  readonly renameBranch?: ContextStore['renameBranch'];
  readonly getContext?: ContextStore['getContext'];
  readonly saveContext?: ContextStore['saveContext'];
  readonly searchMessages?: ContextStore['searchMessages'];
  readonly prune?: ContextStore['prune'];
  readonly findMessageNodes?: ContextStore['findMessageNodes'];
  readonly #store: ContextStore;
  readonly #keepsRecords: boolean;

  constructor(store: ContextStore) {
    this.#store = store;
    this.#keepsRecords = keepsEngineRecords(store);
    this.capabilities = store.capabilities;
    const {
      append,
      forkBranch,
      renameBranch,
      getContext,
      saveContext,
      searchMessages,
      prune,
      findMessageNodes,
    } = store;
    if (typeof append === 'function') {
      // A store that keeps records gets the input and returns the result as they are: a save
      // then costs no extra async step here.
      this.append = this.#keepsRecords
        ? (input: AppendInput): Promise<AppendResult> => append.call(store, input)
        : async (input: AppendInput): Promise<AppendResult> =>
            splitResult(await append.call(store, embedRecords(input)));
    }
    if (typeof forkBranch === 'function')
      this.forkBranch = (input) => forkBranch.call(store, input);
    if (typeof renameBranch === 'function')
      this.renameBranch = (input) => renameBranch.call(store, input);
    if (typeof getContext === 'function')
      this.getContext = (chatId) => getContext.call(store, chatId);
    if (typeof saveContext === 'function')
      this.saveContext = (input) => saveContext.call(store, input);
    if (typeof searchMessages === 'function') {
      this.searchMessages = async (input): Promise<Page<SearchHit>> => {
        const page = await searchMessages.call(store, input);
        return { ...page, items: page.items.map(splitHit) };
      };
    }
    if (typeof prune === 'function') this.prune = (input) => prune.call(store, input);
    if (typeof findMessageNodes === 'function') {
      this.findMessageNodes = async (input) =>
        splitNodes(await findMessageNodes.call(store, input));
    }
  }

  openChat: ContextStore['openChat'] = (input) => this.#store.openChat(input);
  getChat: ContextStore['getChat'] = (chatId) => this.#store.getChat(chatId);
  updateChat: ContextStore['updateChat'] = (input) => this.#store.updateChat(input);
  listChats: ContextStore['listChats'] = (input) => this.#store.listChats(input);
  deleteChat: ContextStore['deleteChat'] = (chatId) => this.#store.deleteChat(chatId);
  getHead: ContextStore['getHead'] = (input) => this.#store.getHead(input);
  createBranch: ContextStore['createBranch'] = (input) => this.#store.createBranch(input);
  getBranch: ContextStore['getBranch'] = (input) => this.#store.getBranch(input);
  listBranches: ContextStore['listBranches'] = (chatId) => this.#store.listBranches(chatId);
  setActiveBranch: ContextStore['setActiveBranch'] = (input) => this.#store.setActiveBranch(input);
  createCheckpoint: ContextStore['createCheckpoint'] = (input) =>
    this.#store.createCheckpoint(input);
  getCheckpoint: ContextStore['getCheckpoint'] = (input) => this.#store.getCheckpoint(input);
  listCheckpoints: ContextStore['listCheckpoints'] = (chatId) =>
    this.#store.listCheckpoints(chatId);
  deleteCheckpoint: ContextStore['deleteCheckpoint'] = (input) =>
    this.#store.deleteCheckpoint(input);
  close: ContextStore['close'] = () => this.#store.close();

  /**
   * A store that keeps records returns what the engine wrote, which never holds the reserved key,
   * so its nodes are passed on untouched, with no extra async step (a store may parse a written
   * message only when it is first read: the engine keeps its own copy). Any other store gets the
   * records inside the messages, and its nodes are split again.
   */
  commit(input: CommitInput): Promise<CommitResult> {
    if (this.#keepsRecords) return this.#store.commit(input);
    return this.#commitEmbedded(input);
  }

  async #commitEmbedded(input: CommitInput): Promise<CommitResult> {
    return splitResult(await this.#store.commit(embedRecords(input)));
  }

  async getChain(input: Parameters<ContextStore['getChain']>[0]): Promise<ChainPage> {
    const page = await this.#store.getChain(input);
    const nodes = splitNodes(page.nodes);
    return nodes === page.nodes ? page : { ...page, nodes };
  }

  async getMessage(
    input: Parameters<ContextStore['getMessage']>[0],
  ): Promise<MessageNodeRecord | null> {
    const node = await this.#store.getMessage(input);
    return node === null ? null : splitEngineRecord(node);
  }

  async getGraph(chatId: string): Promise<ChatGraph> {
    const graph = await this.#store.getGraph(chatId);
    const nodes = splitNodes(graph.nodes);
    return nodes === graph.nodes ? graph : { ...graph, nodes };
  }
}

/** The nodes with their records split out; the same array when none needed it. */
function splitNodes(nodes: readonly MessageNodeRecord[]): readonly MessageNodeRecord[] {
  let result: MessageNodeRecord[] | undefined;
  for (let index = 0; index < nodes.length; index += 1) {
    const node = nodes[index] as MessageNodeRecord;
    const split = splitEngineRecord(node);
    if (split !== node) {
      result ??= nodes.slice();
      result[index] = split;
    }
  }
  return result ?? nodes;
}

/** Records into the messages, for a store that cannot keep them beside. */
function embedRecords<T extends CommitInput | AppendInput>(input: T): T {
  return { ...input, messages: input.messages.map(embedEngineRecord) };
}

function splitResult<T extends CommitResult>(result: T): T {
  const nodes = splitNodes(result.nodes);
  return nodes === result.nodes ? result : { ...result, nodes };
}

function splitHit(hit: SearchHit): SearchHit {
  const message = withoutEngineMetadata(hit.message);
  return message === hit.message ? hit : { ...hit, message };
}
