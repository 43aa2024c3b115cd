import type { BranchRecord, CheckpointRecord } from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import type { GraphNodeView } from './api';
import { collapseGraph, type GraphInput, runId } from './graph-model';

/** A linear chain m0 → m1 → … of `count` messages. */
function chain(count: number, prefix = 'm', parent: string | null = null, from = 0) {
  const nodes: GraphNodeView[] = [];
  for (let index = 0; index < count; index += 1) {
    nodes.push({
      id: `${prefix}${index}`,
      parentId: index === 0 ? parent : `${prefix}${index - 1}`,
      role: index % 2 === 0 ? 'user' : 'assistant',
      sequence: from + index,
      text: `text ${index}`,
      compaction: null,
      aside: false,
      outcome: null,
    });
  }
  return nodes;
}

function branch(name: string, headMessageId: string): BranchRecord {
  return { chatId: 'c', name, headMessageId, createdAt: 0, updatedAt: 0 };
}

function input(nodes: GraphNodeView[], extra: Partial<GraphInput> = {}): GraphInput {
  const head = nodes.at(-1)?.id ?? null;
  return {
    nodes,
    branches: head ? [branch('main', head)] : [],
    checkpoints: [],
    activeIds: new Set(nodes.map((node) => node.id)),
    headId: head,
    ...extra,
  };
}

describe('collapseGraph', () => {
  it('draws a short chain as it is', () => {
    const display = collapseGraph(input(chain(5)));
    expect(display.items.map((item) => item.id)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    expect(display.links).toHaveLength(4);
  });

  it('folds a long linear run, keeping the root and the messages near the head', () => {
    const display = collapseGraph(input(chain(10_000)));
    expect(display.items.map((item) => item.id)).toEqual([
      'm0',
      runId('m1'),
      'm9996',
      'm9997',
      'm9998',
      'm9999',
    ]);
    const run = display.items[1];
    expect(run?.kind === 'run' ? run.messageIds.length : 0).toBe(9995);
    expect(display.itemOf.get('m500')).toBe(runId('m1'));
    expect(display.links.map((link) => link.id)).toEqual([
      `m0->${runId('m1')}`,
      `${runId('m1')}->m9996`,
      'm9996->m9997',
      'm9997->m9998',
      'm9998->m9999',
    ]);
  });

  it('keeps forks, first messages after a fork, branch heads and checkpoints visible', () => {
    const trunk = chain(20);
    const side = chain(12, 's', 'm9', 100);
    const checkpoints: CheckpointRecord[] = [
      { chatId: 'c', name: 'keep', messageId: 'm4', createdAt: 0 },
    ];
    const display = collapseGraph(
      input([...trunk, ...side], {
        branches: [branch('main', 'm19'), branch('main-v2', 's11')],
        checkpoints,
        activeIds: new Set(trunk.map((node) => node.id)),
        headId: 'm19',
      }),
    );
    const ids = display.items.map((item) => item.id);
    for (const visible of ['m0', 'm4', 'm9', 'm10', 's0', 's11', 'm16', 'm19'])
      expect(ids).toContain(visible);
    // m10's run on the trunk, s0's run on the side branch.
    expect(ids).toContain(runId('m11'));
    expect(ids).toContain(runId('s1'));
    const sideRun = display.items.find((item) => item.id === runId('s1'));
    expect(sideRun?.onBranch).toBe(false);
    const head = display.items.find((item) => item.id === 'm19');
    expect(head?.kind === 'message' && head.isHead).toBe(true);
    expect(head?.kind === 'message' ? head.heads : []).toEqual(['main']);
  });

  it('unfolds a run on request and keeps a pinned message visible', () => {
    const nodes = chain(30);
    const unfolded = collapseGraph(input(nodes), { expanded: new Set([runId('m1')]) });
    expect(unfolded.items).toHaveLength(30);
    const pinned = collapseGraph(input(nodes), { pinned: new Set(['m12']) });
    expect(pinned.items.map((item) => item.id)).toEqual([
      'm0',
      runId('m1'),
      'm12',
      runId('m13'),
      'm26',
      'm27',
      'm28',
      'm29',
    ]);
  });

  it('draws an empty graph as nothing', () => {
    const display = collapseGraph(input([]));
    expect(display.items).toEqual([]);
    expect(display.links).toEqual([]);
  });
});
