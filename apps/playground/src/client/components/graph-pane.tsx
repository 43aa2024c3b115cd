import { Graph, layout } from '@dagrejs/dagre';
import { Background, Controls, type Edge, type Node, ReactFlow } from '@xyflow/react';
import { type ReactElement, useMemo, useState } from 'react';
import type { ChatView } from '../api';
import { BranchIcon } from './icons';

/** Props of {@link GraphPane}. */
export interface GraphPaneProps {
  view: ChatView;
  busy: boolean;
  onRewind: (messageId: string) => void;
  onCheckpoint: (name: string) => void;
  onRestore: (name: string) => void;
  onBtw: () => void;
  onSwitch: (branch: string) => void;
}

const NODE_WIDTH = 190;
const NODE_HEIGHT = 58;

interface Layout {
  nodes: Node[];
  edges: Edge[];
}

/** Lays the message DAG out top to bottom with dagre and marks heads, checkpoints and the active path. */
function layoutGraph(view: ChatView): Layout {
  const graph = new Graph();
  graph.setGraph({ rankdir: 'TB', nodesep: 24, ranksep: 34, marginx: 10, marginy: 10 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of view.graph.nodes)
    graph.setNode(node.id, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const node of view.graph.nodes)
    if (node.parentId !== null) graph.setEdge(node.parentId, node.id);
  layout(graph);
  const active = new Set(view.messages.map((message) => message.id));
  const heads = new Map<string, string[]>();
  for (const branch of view.graph.branches) {
    if (branch.headMessageId)
      heads.set(branch.headMessageId, [...(heads.get(branch.headMessageId) ?? []), branch.name]);
  }
  const checkpoints = new Map<string, string[]>();
  for (const checkpoint of view.graph.checkpoints) {
    checkpoints.set(checkpoint.messageId, [
      ...(checkpoints.get(checkpoint.messageId) ?? []),
      checkpoint.name,
    ]);
  }
  const nodes: Node[] = view.graph.nodes.map((node) => {
    const position = graph.node(node.id);
    const branchNames = heads.get(node.id) ?? [];
    const checkpointNames = checkpoints.get(node.id) ?? [];
    return {
      id: node.id,
      position: { x: position.x - NODE_WIDTH / 2, y: position.y - NODE_HEIGHT / 2 },
      data: {
        label: (
          <div
            className="graph-node-inner"
            title={`${node.role}: ${node.text}\n(click to rewind here)`}
          >
            <div className="graph-node-top">
              <span className={`dot ${node.role}`} />
              <span className="graph-node-text">{node.text || '(no text)'}</span>
            </div>
            <div className="graph-node-tags">
              {branchNames.map((name) => (
                <span key={name} className={name === view.branch ? 'tag head active' : 'tag head'}>
                  <BranchIcon /> {name}
                </span>
              ))}
              {checkpointNames.map((name) => (
                <span key={name} className="tag checkpoint">
                  ⚑ {name}
                </span>
              ))}
            </div>
          </div>
        ),
      },
      className: `graph-node ${node.role} ${active.has(node.id) ? 'on-branch' : 'off-branch'}`,
      style: { width: NODE_WIDTH, height: NODE_HEIGHT },
      draggable: false,
      connectable: false,
    };
  });
  const edges: Edge[] = view.graph.nodes
    .filter((node) => node.parentId !== null)
    .map((node) => ({
      id: `${node.parentId}->${node.id}`,
      source: node.parentId!,
      target: node.id,
      className: active.has(node.id) ? 'on-branch' : 'off-branch',
      animated: node.id === view.headMessageId,
    }));
  return { nodes, edges };
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : noun.endsWith('h') ? 'es' : 's'}`;
}

/** The chat's message graph with branch and checkpoint controls. */
export function GraphPane(props: GraphPaneProps): ReactElement {
  const { view } = props;
  const graphLayout = useMemo(() => layoutGraph(view), [view]);
  const [checkpointName, setCheckpointName] = useState('');
  const [restoreName, setRestoreName] = useState('');
  const restoreTarget = restoreName || view.graph.checkpoints.at(-1)?.name || '';
  const key = `${view.chat.id}:${view.graph.nodes.length}:${view.graph.branches.length}`;

  return (
    <section className="panel graph-panel" aria-label="Graph">
      <header className="panel-header">
        <h2>Graph</h2>
        <span className="muted small">
          {plural(view.graph.nodes.length, 'node')} · {plural(view.graph.branches.length, 'branch')}{' '}
          · click a node to rewind there
        </span>
      </header>
      <div className="graph-toolbar">
        <label className="inline">
          <BranchIcon />
          <select
            aria-label="Switch branch"
            value={view.branch}
            disabled={props.busy}
            onChange={(event) => props.onSwitch(event.target.value)}
          >
            {view.graph.branches.map((branch) => (
              <option key={branch.name} value={branch.name}>
                {branch.name}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          disabled={props.busy}
          onClick={props.onBtw}
          title="Fork a parallel branch at the head, staying here"
        >
          btw
        </button>
        <span className="divider" />
        <form
          className="inline"
          onSubmit={(event) => {
            event.preventDefault();
            if (checkpointName.trim()) {
              props.onCheckpoint(checkpointName.trim());
              setCheckpointName('');
            }
          }}
        >
          <input
            aria-label="Checkpoint name"
            placeholder="name"
            value={checkpointName}
            onChange={(event) => setCheckpointName(event.target.value)}
          />
          <button type="submit" disabled={props.busy || checkpointName.trim() === ''}>
            Checkpoint
          </button>
        </form>
        <span className="divider" />
        <select
          aria-label="Checkpoint to restore"
          value={restoreTarget}
          disabled={view.graph.checkpoints.length === 0}
          onChange={(event) => setRestoreName(event.target.value)}
        >
          {view.graph.checkpoints.length === 0 ? <option value="">no checkpoints</option> : null}
          {view.graph.checkpoints.map((checkpoint) => (
            <option key={checkpoint.name} value={checkpoint.name}>
              {checkpoint.name}
            </option>
          ))}
        </select>
        <button
          type="button"
          disabled={props.busy || restoreTarget === ''}
          onClick={() => props.onRestore(restoreTarget)}
        >
          Restore
        </button>
      </div>
      <div className="graph-canvas">
        {view.graph.nodes.length === 0 ? (
          <p className="muted center">The graph fills in as messages are saved.</p>
        ) : (
          <ReactFlow
            key={key}
            nodes={graphLayout.nodes}
            edges={graphLayout.edges}
            fitView
            fitViewOptions={{ padding: 0.15, maxZoom: 1 }}
            minZoom={0.2}
            nodesDraggable={false}
            nodesConnectable={false}
            onNodeClick={(_event, node) => props.onRewind(node.id)}
          >
            <Background gap={18} size={1} />
            <Controls showInteractive={false} />
          </ReactFlow>
        )}
      </div>
    </section>
  );
}
