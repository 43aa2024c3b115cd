import { type RenderNode, TreeRenderer } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import { defineRendererConformance } from './define-renderer-conformance';
import { deepCopy, generateTree, nestedTree } from './fragment-trees';
import { rendererSampleFragments } from './renderer-sample';

// The smallest honest renderer: one `path = JSON value` line per leaf or empty group. The kit
// must accept it.
class PathLinesRenderer extends TreeRenderer {
  readonly format = 'path-lines';

  protected renderNodes(nodes: readonly RenderNode[]): string {
    const lines: string[] = [];
    const visit = (node: RenderNode, path: string): void => {
      const here = `${path}/${JSON.stringify(node.key)}`;
      if (node.kind === 'scalar') lines.push(`${here} = ${JSON.stringify(node.value)}`);
      else if (node.children.length === 0) lines.push(`${here} = []`);
      else for (const child of node.children) visit(child, here);
    };
    for (const node of nodes) visit(node, '');
    return lines.join('\n');
  }
}

defineRendererConformance({
  name: 'PathLinesRenderer (kit self-test)',
  createRenderer: () => new PathLinesRenderer(),
  validateOutput: (output) => {
    for (const line of output.split('\n')) JSON.parse(line.slice(line.lastIndexOf(' = ') + 3));
  },
  generatedTrees: 10,
});

describe('fragment tree generator', () => {
  it('builds the same tree from the same seed and different trees from different seeds', () => {
    expect(generateTree(3)).toStrictEqual(generateTree(3));
    expect(generateTree(3).leafTexts).not.toStrictEqual(generateTree(4).leafTexts);
  });

  it('lists every leaf and name it put in, and a cleaned copy without null or undefined', () => {
    const tree = generateTree(7);
    const serialized = JSON.stringify(tree.cleaned);
    for (const text of tree.leafTexts) expect(serialized).toContain(text);
    for (const name of tree.names) expect(serialized).toContain(name);
    expect(serialized).not.toContain('null');
  });

  it('builds deep trees without recursion', () => {
    let node: unknown = nestedTree(100_000, 'list', 'leaf').data;
    let depth = 0;
    while (Array.isArray(node)) {
      node = node[0];
      depth++;
    }
    expect(depth).toBe(100_000);
    expect(node).toBe('leaf');
  });

  it('copies deeply, keeping undefined values and odd keys', () => {
    const original = { a: [1, { b: undefined }], ['__proto__']: 'own' } as Record<string, unknown>;
    const copy = deepCopy(original);
    expect(copy).toStrictEqual(original);
    expect(copy.a).not.toBe(original.a);
  });

  it('gives a fresh sample on every call', () => {
    const sample = rendererSampleFragments();
    sample.pop();
    expect(rendererSampleFragments().length).toBe(sample.length + 1);
  });
});
