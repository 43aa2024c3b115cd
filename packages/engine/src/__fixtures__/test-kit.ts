import {
  type ContextStore,
  type MessageNodeRecord,
  OPTIONAL_CAPABILITIES,
  OPTIONAL_CAPABILITY_METHODS,
  type RenderNode,
  TreeRenderer,
} from '@ctxgraph/fragments-core';
import { MockLanguageModelV3 } from 'ai/test';

/** A store wrapper that counts calls per method, to prove what an operation reads and writes. */
export function countingStore(store: ContextStore): {
  store: ContextStore;
  calls: Map<string, number>;
  reset(): void;
} {
  const calls = new Map<string, number>();
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return (...args: unknown[]) => {
        calls.set(property, (calls.get(property) ?? 0) + 1);
        return (value as (...parameters: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store: proxy, calls, reset: () => calls.clear() };
}

/** What a {@link readCountingStore} counted since its last `reset()`. */
export interface ReadCounts {
  /** Nodes the store returned from reads (`getChain`, `getMessage`, `findMessageNodes`, `getGraph`). */
  nodes: number;
  /**
   * Messages the caller looked at (each node's `message`, once per node), of the nodes reads
   * returned and of those a write (`commit`, `append`) returned.
   */
  parsed: number;
  /** Calls per method. */
  readonly calls: Map<string, number>;
}

/**
 * A store wrapper that counts what its caller reads through the store API: the nodes each read
 * returns and, of those, the messages the caller opens (a node's `message` is counted the first
 * time it is read, as a store that parses on first read would pay for it); the nodes a write
 * returns count only when their message is opened. Counts, not timings: an operation that reads a bounded number of nodes does so
 * whatever the machine.
 */
export function readCountingStore(store: ContextStore): {
  store: ContextStore;
  counts: ReadCounts;
  reset(): void;
} {
  const counts: ReadCounts = { nodes: 0, parsed: 0, calls: new Map() };
  const counted = (node: MessageNodeRecord, read = true): MessageNodeRecord => {
    if (read) counts.nodes += 1;
    let opened = false;
    const { message: _message, ...rest } = Object.getOwnPropertyDescriptors(node);
    return Object.defineProperties(
      {},
      {
        ...rest,
        message: {
          enumerable: true,
          get: () => {
            if (!opened) counts.parsed += 1;
            opened = true;
            return node.message;
          },
        },
      },
    ) as MessageNodeRecord;
  };
  const nodes = (list: readonly MessageNodeRecord[]) => list.map((node) => counted(node));
  const written = (result: { nodes: readonly MessageNodeRecord[] }) => ({
    ...result,
    nodes: result.nodes.map((node) => counted(node, false)),
  });
  const results: Partial<Record<keyof ContextStore, (result: never) => unknown>> = {
    getChain: (page: { nodes: readonly MessageNodeRecord[] }) => ({
      ...page,
      nodes: nodes(page.nodes),
    }),
    getMessage: (node: MessageNodeRecord | null) => (node === null ? null : counted(node)),
    findMessageNodes: nodes,
    getGraph: (graph: { nodes: readonly MessageNodeRecord[] }) => ({
      ...graph,
      nodes: nodes(graph.nodes),
    }),
    commit: written,
    append: written,
  };
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      return async (...args: unknown[]) => {
        counts.calls.set(property, (counts.calls.get(property) ?? 0) + 1);
        const result = await (value as (...parameters: unknown[]) => unknown).apply(target, args);
        const count = results[property as keyof ContextStore];
        return count === undefined ? result : count(result as never);
      };
    },
  });
  return {
    store: proxy,
    counts,
    reset: () => {
      counts.nodes = 0;
      counts.parsed = 0;
      counts.calls.clear();
    },
  };
}

/** A store whose listed members are replaced (to simulate failures); everything else delegates. */
export function overrideStore(store: ContextStore, overrides: Partial<ContextStore>): ContextStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (Object.hasOwn(overrides, property))
        return (overrides as Record<PropertyKey, unknown>)[property];
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A plain line-per-leaf renderer, so engine tests do not depend on a renderer package. */
export class LineRenderer extends TreeRenderer {
  readonly format = 'lines';
  protected renderNodes(nodes: readonly RenderNode[]): string {
    const lines: string[] = [];
    const visit = (node: RenderNode, prefix: string): void => {
      const label = node.key ?? '-';
      if (node.kind === 'scalar') lines.push(`${prefix}${label}: ${node.value}`);
      else {
        lines.push(`${prefix}${label}:`);
        for (const child of node.children) visit(child, `${prefix}  `);
      }
    };
    for (const node of nodes) visit(node, '');
    return lines.join('\n');
  }
}

/** A mock model from `ai/test` that answers each call with the next reply. */
export function scriptedModel(...replies: string[]): MockLanguageModelV3 {
  let call = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const text = replies[Math.min(call, replies.length - 1)] ?? '';
      call += 1;
      return {
        content: [{ type: 'text', text }],
        finishReason: { unified: 'stop', raw: undefined },
        usage: {
          inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 5, text: 5, reasoning: undefined },
        },
        warnings: [],
      };
    },
  });
}

/**
 * The store as a small third-party v1 store would be: every required method, and none of the
 * optional capabilities (search, search prefixes, retention, live replies) declared or present.
 * What needs one must refuse with `UnsupportedCapabilityError` naming it.
 */
export function withoutOptionalCapabilities(store: ContextStore): ContextStore {
  const { persistent, multiProcess } = store.capabilities;
  const absent: Partial<Record<keyof ContextStore, undefined>> = {};
  for (const capability of OPTIONAL_CAPABILITIES)
    for (const method of OPTIONAL_CAPABILITY_METHODS[capability]) absent[method] = undefined;
  return overrideStore(store, { capabilities: { persistent, multiProcess }, ...absent });
}
