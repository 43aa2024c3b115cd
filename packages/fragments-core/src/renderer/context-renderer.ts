import type { ContextFragment } from '../fragment/context-fragment';

/**
 * Turns context fragments into the text of a system prompt. Version 1 of the contract.
 *
 * Implementations must render the same input to the same bytes every time (stable prompts keep
 * provider prompt caches warm), skip `null` / `undefined`, show every other leaf value, escape
 * what their format needs, and render an empty list to `''`. `@ctxgraph/conformance` checks all
 * of this; most implementations extend {@link TreeRenderer} and get the walk for free.
 */
export interface ContextRenderer {
  /** The specification version (of this contract) the renderer implements. */
  readonly specificationVersion: 'v1';
  /** A short name of the format: `'xml'`, `'markdown'`, `'toon'`. */
  readonly format: string;
  /** Renders the fragments, in order, to one string. */
  render(fragments: readonly ContextFragment[]): string;
}
