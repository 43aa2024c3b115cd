import { ValidationError } from '../errors/errors';
import type { ContextFragment } from '../fragment/context-fragment';
import type { ContextRenderer } from './context-renderer';
import { DEFAULT_MAX_DEPTH, type RenderNode, type WalkOptions, walkFragments } from './render-tree';

/** Options every {@link TreeRenderer} accepts. */
export interface TreeRendererOptions extends WalkOptions {}

/**
 * The base most renderers extend (template method): it walks the fragments into a normalized
 * tree of {@link RenderNode}s, refusing cycles and trees deeper than `maxDepth`, and hands the tree
 * to {@link TreeRenderer.renderNodes}, which the format implements. An empty list renders to `''`
 * without calling the format.
 *
 * @example
 * ```ts
 * class PlainRenderer extends TreeRenderer {
 *   readonly format = 'plain';
 *   protected renderNodes(nodes: readonly RenderNode[]): string {
 *     return nodes.map((node) => (node.kind === 'scalar' ? `${node.key}: ${node.value}` : node.key)).join('\n');
 *   }
 * }
 * ```
 */
export abstract class TreeRenderer implements ContextRenderer {
  readonly specificationVersion: 'v1' = 'v1';
  abstract readonly format: string;
  /** The walk options this renderer was created with. */
  protected readonly walkOptions: WalkOptions;

  constructor(options: TreeRendererOptions = {}) {
    const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    if (!Number.isInteger(maxDepth) || maxDepth < 1) {
      throw new ValidationError(
        `${new.target.name}(options): maxDepth must be a positive integer, received ${String(maxDepth)}.`,
        {
          issues: [{ path: 'maxDepth', message: 'expected a positive integer' }],
        },
      );
    }
    this.walkOptions = { maxDepth };
  }

  render(fragments: readonly ContextFragment[]): string {
    if (fragments.length === 0) return '';
    const nodes = walkFragments(fragments, this.walkOptions);
    if (nodes.length === 0) return '';
    return this.renderNodes(nodes);
  }

  /** Draws the normalized tree in this renderer's format. `nodes` is never empty. */
  protected abstract renderNodes(nodes: readonly RenderNode[]): string;
}
