import { Graph, layout } from '@dagrejs/dagre';
import { type Edge, type Node, useReactFlow, useStore } from '@xyflow/react';
import { type ReactElement, type RefObject, useEffect } from 'react';
import type { DisplayGraph, GraphItem } from '../graph-model';
import { BranchIcon, SummaryIcon } from './icons';

/*
 * How the graph pane draws the message graph with React Flow: the layout (dagre, top to bottom),
 * each node's label, and two helpers inside the flow (label scale, centring).
 */

const NODE_WIDTH = 200;
const NODE_HEIGHT = 56;
const RUN_HEIGHT = 34;

/** The graph laid out: React Flow's nodes and edges, and each item's centre. */
export interface Placed {
  nodes: Node[];
  edges: Edge[];
  centres: Map<string, { x: number; y: number }>;
}

/** Lays the drawn graph out top to bottom with dagre. */
export function place(
  display: DisplayGraph,
  activeBranch: string,
  selectedId: string | null,
  /** The one node the Tab key stops at (the others are reached with the arrow keys). */
  tabStop: string | null = null,
): Placed {
  const graph = new Graph();
  graph.setGraph({ rankdir: 'TB', nodesep: 28, ranksep: 36, marginx: 10, marginy: 10 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const item of display.items) {
    graph.setNode(item.id, {
      width: NODE_WIDTH,
      height: item.kind === 'run' ? RUN_HEIGHT : NODE_HEIGHT,
    });
  }
  for (const link of display.links) graph.setEdge(link.source, link.target);
  layout(graph);
  const centres = new Map<string, { x: number; y: number }>();
  const nodes: Node[] = display.items.map((item) => {
    const { x, y } = graph.node(item.id);
    centres.set(item.id, { x, y });
    const height = item.kind === 'run' ? RUN_HEIGHT : NODE_HEIGHT;
    return {
      id: item.id,
      position: { x: x - NODE_WIDTH / 2, y: y - height / 2 },
      data: { label: labelOf(item, activeBranch) },
      className: [
        'graph-node',
        item.kind === 'run' ? 'run' : item.node.role,
        item.kind === 'message' && item.node.compaction !== null ? 'compaction' : '',
        item.onBranch ? 'on-branch' : 'off-branch',
        item.kind === 'message' && item.isHead ? 'current-head' : '',
        item.id === selectedId ? 'selected-node' : '',
      ]
        .filter(Boolean)
        .join(' '),
      style: { width: NODE_WIDTH, height },
      // Known sizes: the minimap and the visible-only rendering need no measuring first.
      width: NODE_WIDTH,
      height,
      draggable: false,
      connectable: false,
      selectable: false,
      ariaRole: 'button',
      ariaLabel: accessibleName(item),
      // A roving tab stop: one node in the tab order, the rest reached with the arrow keys.
      domAttributes: { tabIndex: item.id === tabStop ? 0 : -1 },
    };
  });
  const edges: Edge[] = display.links.map((link) => ({
    id: link.id,
    source: link.source,
    target: link.target,
    className: link.onBranch ? 'on-branch' : 'off-branch',
    // Lines between nodes say nothing the nodes' names do not: hidden from assistive technology
    // (React Flow would name them after internal ids), and never tab stops.
    ariaLabel: 'Link between messages',
    focusable: false,
    domAttributes: { 'aria-hidden': true },
  }));
  return { nodes, edges, centres };
}

/** What a screen reader says for a node: its role, place and text, not its internal id. */
function accessibleName(item: GraphItem): string {
  if (item.kind === 'run') return `Folded run of ${item.messageIds.length} messages`;
  const { node } = item;
  const where = [
    item.isHead ? 'current message' : '',
    item.version ? `version ${item.version.index} of ${item.version.count}` : '',
    item.heads.length > 0 ? `head of ${item.heads.join(', ')}` : '',
    item.checkpoints.length > 0 ? `checkpoint ${item.checkpoints.join(', ')}` : '',
  ].filter(Boolean);
  const text = node.text.length > 80 ? `${node.text.slice(0, 80)}…` : node.text || '(no text)';
  const kind =
    node.compaction !== null
      ? `Summary of ${node.compaction.coveredMessages} messages`
      : `Message ${node.sequence}, ${node.role}`;
  return `${[kind, ...where].join('; ')}: ${text}`;
}

function labelOf(item: GraphItem, activeBranch: string): ReactElement {
  if (item.kind === 'run') {
    return (
      <div
        className="graph-node-inner run-label"
        title="A run of messages without forks, folded. Click to unfold it."
      >
        ⋯ {item.messageIds.length} messages
      </div>
    );
  }
  const { node } = item;
  if (node.compaction !== null) {
    return (
      <div className="graph-node-inner" title={node.text}>
        <div className="graph-node-top">
          <span className="compaction-mark">
            <SummaryIcon />
          </span>
          <span className="graph-node-text">
            Summary of {node.compaction.coveredMessages} messages
          </span>
        </div>
        <div className="graph-node-tags">
          <span className="tag saved">−{node.compaction.savedTokens} tokens</span>
          {item.heads.map((name) => (
            <span key={name} className={name === activeBranch ? 'tag head active' : 'tag head'}>
              <BranchIcon /> {name}
            </span>
          ))}
        </div>
      </div>
    );
  }
  return (
    <div className="graph-node-inner" title={`${node.role}: ${node.text}`}>
      <div className="graph-node-top">
        <span className={`dot ${node.role}`} />
        <span className="graph-node-text">{node.text || '(no text)'}</span>
        {item.version ? (
          <span
            className="tag version"
            data-testid="version-badge"
            title={`Version ${item.version.index} of ${item.version.count} (an edit or a regenerated reply)`}
          >
            {item.version.index}/{item.version.count}
          </span>
        ) : null}
      </div>
      <div className="graph-node-tags">
        {item.heads.map((name) => (
          <span key={name} className={name === activeBranch ? 'tag head active' : 'tag head'}>
            <BranchIcon /> {name}
          </span>
        ))}
        {item.checkpoints.map((name) => (
          <span key={name} className="tag checkpoint">
            ⚑ {name}
          </span>
        ))}
      </div>
    </div>
  );
}

/**
 * Keeps branch and checkpoint labels legible when zoomed out: sets `--label-scale` (the inverse
 * of the zoom, at least 1) on the canvas, which the tags' CSS scales by.
 */
export function LabelScale(props: { target: RefObject<HTMLDivElement | null> }): null {
  const zoom = useStore((state) => state.transform[2]);
  useEffect(() => {
    props.target.current?.style.setProperty('--label-scale', String(Math.max(1, 0.9 / zoom)));
  }, [zoom, props.target]);
  return null;
}

/** Centres the view on a point whenever `request` changes (the head moved, a node was asked for). */
export function CentreOn(props: {
  point: { x: number; y: number } | null;
  request: string;
  /** Screen pixels to move the point right of the centre (to clear the message card). */
  shift: number;
}): null {
  const flow = useReactFlow();
  const { point, request, shift } = props;
  // The canvas's size: when it changes (the inspector opened, a pane was resized or folded) the
  // point asked for is centred again, so it never ends up behind the new edge.
  const width = useStore((state) => state.width);
  const height = useStore((state) => state.height);
  // biome-ignore lint/correctness/useExhaustiveDependencies: centre once per request or size, not per layout
  useEffect(() => {
    if (point === null || width === 0 || height === 0) return;
    const zoom = Math.max(flow.getZoom(), 0.8);
    void flow.setCenter(point.x - shift / zoom, point.y, { zoom, duration: 0 });
  }, [request, width, height]);
  return null;
}
