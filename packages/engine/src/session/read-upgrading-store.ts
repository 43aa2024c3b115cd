import {
  type ChainPage,
  type ChatGraph,
  type ContextStore,
  type MessageNodeRecord,
  type Page,
  type SearchHit,
  splitEngineRecord,
  withoutEngineMetadata,
} from '@ctxgraph/fragments-core';

// Every store keeps the engine's record of a node beside its message. Data stored by earlier
// versions kept it inside the message, in `metadata.ctxgraph`: the engine reads such a node as if
// the record were beside it (the read-time upgrade), so no message it hands out carries the key
// and every feature finds the record in one place. Writes pass through untouched: the engine
// writes records beside the message, and never the reserved key.

/** How each read's answer is upgraded, by method. */
const upgrades: { readonly [Method in keyof ContextStore]?: (answer: never) => unknown } = {
  getChain: (page: ChainPage): ChainPage => {
    const nodes = splitNodes(page.nodes);
    return nodes === page.nodes ? page : { ...page, nodes };
  },
  getMessage: (node: MessageNodeRecord | null) => (node === null ? null : splitEngineRecord(node)),
  findMessageNodes: splitNodes,
  getGraph: (graph: ChatGraph): ChatGraph => {
    const nodes = splitNodes(graph.nodes);
    return nodes === graph.nodes ? graph : { ...graph, nodes };
  },
  searchMessages: (page: Page<SearchHit>): Page<SearchHit> => ({
    ...page,
    items: page.items.map(splitHit),
  }),
};

/**
 * The store as the engine reads it: every node a read returns has its record beside the message
 * and no `metadata.ctxgraph` in the message. A proxy: every other member (writes, pointers, the
 * live-reply methods, `capabilities`) is the store's own, bound to it.
 */
export function readUpgradingStore(store: ContextStore): ContextStore {
  // One wrapper per method of the store, made on first use.
  const wrappers = new WeakMap<object, unknown>();
  const table = upgrades as Readonly<
    Record<PropertyKey, ((answer: unknown) => unknown) | undefined>
  >;
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      let wrapper = wrappers.get(value);
      if (wrapper === undefined) {
        const method = value as (...args: unknown[]) => unknown;
        const upgrade = table[property];
        wrapper =
          upgrade === undefined
            ? (...args: unknown[]) => method.apply(target, args)
            : async (...args: unknown[]) => upgrade(await method.apply(target, args));
        wrappers.set(value, wrapper);
      }
      return wrapper;
    },
  });
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

function splitHit(hit: SearchHit): SearchHit {
  const message = withoutEngineMetadata(hit.message);
  return message === hit.message ? hit : { ...hit, message };
}
