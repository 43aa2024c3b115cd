import { Graph, layout } from '@dagrejs/dagre';
import { type Edge, type Node, useReactFlow, useStore } from '@xyflow/react';
import { type ReactElement, type RefObject, useEffect, useLayoutEffect, useRef } from 'react';
import type { DisplayGraph, GraphItem } from '../graph-model';
import { BranchIcon, SummaryIcon } from './icons';

/*
 * How the graph pane draws the message graph with React Flow: the layout (dagre, top to bottom),
 * each node's label, and two helpers inside the flow (label scale, centring).
 */

const NODE_WIDTH = 200;
const NODE_HEIGHT = 56;
const RUN_HEIGHT = 34;

/** The graph laid out: React Flow's nodes and edges, each item's centre, and the whole size. */
export interface Placed {
  nodes: Node[];
  edges: Edge[];
  centres: Map<string, { x: number; y: number }>;
  /** The laid-out graph's width and height, in flow units (margins included). */
  size: { width: number; height: number };
}

/**
 * Which label wins when two intersect (lower wins): the current message's, the selected
 * message's, the active branch's head tag, other branch and checkpoint tags, folded runs on the
 * active branch, other folded runs.
 */
const LABEL_RANK = {
  head: 0,
  selected: 1,
  activeBranch: 2,
  tags: 3,
  runOnBranch: 4,
  run: 5,
} as const;

function labelRank(item: GraphItem, activeBranch: string, selectedId: string | null): number {
  if (item.kind === 'run') return item.onBranch ? LABEL_RANK.runOnBranch : LABEL_RANK.run;
  if (item.isHead) return LABEL_RANK.head;
  if (item.id === selectedId) return LABEL_RANK.selected;
  return item.heads.includes(activeBranch) ? LABEL_RANK.activeBranch : LABEL_RANK.tags;
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
      data: { label: labelOf(item, activeBranch, labelRank(item, activeBranch, selectedId)) },
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
  const { width = 0, height = 0 } = graph.graph();
  return { nodes, edges, centres, size: { width, height } };
}

/** What a screen reader says for a node: its role, place and text, not its internal id. */
function accessibleName(item: GraphItem): string {
  if (item.kind === 'run') return `Folded run of ${item.messageIds.length} messages`;
  const { node } = item;
  const where = [
    item.isHead ? 'current message' : '',
    item.node.outcome === 'aborted' ? 'stopped' : item.node.outcome === 'error' ? 'failed' : '',
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

/** A node's label: its text, and the tags (branch heads, checkpoints) or the fold's count. */
function labelOf(item: GraphItem, activeBranch: string, rank: number): ReactElement {
  if (item.kind === 'run') {
    return (
      <div
        className="graph-node-inner run-label"
        data-label-rank={rank}
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
        <div className="graph-node-tags" data-label-rank={rank}>
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
      </div>
      {/* The version badge rides with the tags: kept at a legible size on screen at any zoom,
          and hidden with them where it would overlap a higher-ranked label. */}
      <div className="graph-node-tags" data-label-rank={rank}>
        {item.version ? (
          <span
            className="tag version"
            data-testid="version-badge"
            title={`Version ${item.version.index} of ${item.version.count} (an edit or a regenerated reply)`}
          >
            {item.version.index}/{item.version.count}
          </span>
        ) : null}
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

/** Screen pixels kept free between two labels. */
const LABEL_GAP = 2;

/**
 * Hides every label that would intersect one that ranks higher (`data-label-rank`, lower wins),
 * measured on screen as drawn: the current message's and the selected message's labels are
 * placed first, so they always show (the selected one gives way to the current one alone).
 */
function cullLabels(root: HTMLElement): void {
  const labels = [...root.querySelectorAll<HTMLElement>('[data-label-rank]')]
    .map((element, order) => ({
      element,
      order,
      rank: Number(element.dataset.labelRank),
      box: element.getBoundingClientRect(),
    }))
    .sort((a, b) => a.rank - b.rank || a.order - b.order);
  const kept: DOMRect[] = [];
  for (const { element, box } of labels) {
    // An empty tag row takes no room and hides nothing.
    if (box.width === 0 || box.height === 0) continue;
    const clash = kept.some(
      (other) =>
        box.left < other.right + LABEL_GAP &&
        other.left < box.right + LABEL_GAP &&
        box.top < other.bottom + LABEL_GAP &&
        other.top < box.bottom + LABEL_GAP,
    );
    element.classList.toggle('label-hidden', clash);
    if (!clash) kept.push(box);
  }
}

/**
 * Keeps the graph's labels legible at any zoom and never on top of each other: sets
 * `--label-scale` (the inverse of the zoom, at least 1) on the canvas, which the tags' and the
 * folded runs' CSS scale by, then hides the labels that would intersect a higher-ranked one
 * (see {@link cullLabels}). It measures again whenever the view moves or nodes are drawn.
 */
export function LabelScale(props: { target: RefObject<HTMLDivElement | null> }): null {
  const zoom = useStore((state) => state.transform[2]);
  const nodes = useStore((state) => state.nodes);
  const { target } = props;
  // biome-ignore lint/correctness/useExhaustiveDependencies: measure again when the nodes change
  useLayoutEffect(() => {
    const root = target.current;
    if (root === null) return;
    root.style.setProperty('--label-scale', String(Math.max(1, 0.9 / zoom)));
    cullLabels(root);
  }, [zoom, nodes, target]);
  // React Flow draws only the nodes in view: a pan draws new ones without a zoom or a new layout.
  const observer = useRef<MutationObserver | null>(null);
  useEffect(() => {
    const root = target.current;
    const drawn = root?.querySelector('.react-flow__nodes');
    const viewport = root?.querySelector('.react-flow__viewport');
    if (!root || !drawn || !viewport) return;
    observer.current = new MutationObserver(() => cullLabels(root));
    observer.current.observe(drawn, { childList: true, subtree: true });
    observer.current.observe(viewport, { attributes: true, attributeFilter: ['style'] });
    return () => observer.current?.disconnect();
  }, [target]);
  return null;
}

/**
 * Keeps a point (the current message) where it is on screen when the layout moves it (a folded
 * run unfolded above it, a message pinned): the view pans by as much as the point moved, so what
 * was in view stays in view. A new `anchor` (another chat, branch or head) is left to
 * {@link CentreOn}.
 */
export function KeepInPlace(props: {
  point: { x: number; y: number } | null;
  anchor: string;
}): null {
  const flow = useReactFlow();
  const last = useRef<{ anchor: string; x: number; y: number } | null>(null);
  const { point, anchor } = props;
  useLayoutEffect(() => {
    if (point === null) return;
    const before = last.current;
    last.current = { anchor, x: point.x, y: point.y };
    if (before === null || before.anchor !== anchor) return;
    if (before.x === point.x && before.y === point.y) return;
    const { x, y, zoom } = flow.getViewport();
    void flow.setViewport({
      x: x - (point.x - before.x) * zoom,
      y: y - (point.y - before.y) * zoom,
      zoom,
    });
  }, [point, anchor, flow]);
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
  // The canvas's size: when it shrinks (the inspector opened, a pane was widened) the point asked
  // for is centred again, so it never ends up behind the new edge.
  const width = useStore((state) => state.width);
  const height = useStore((state) => state.height);
  const last = useRef<{ request: string; width: number; height: number } | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: centre once per request or size, not per layout
  useEffect(() => {
    if (point === null || width === 0 || height === 0) return;
    const before = last.current;
    last.current = { request, width, height };
    // Only the canvas grew (the inspector beside it closed): what was in view still is, so the
    // view stays and the graph does not jump under the pointer (the second click of a double
    // click on a node would land beside it).
    if (
      before !== null &&
      before.request === request &&
      width >= before.width &&
      height >= before.height
    )
      return;
    const zoom = Math.max(flow.getZoom(), 0.8);
    void flow.setCenter(point.x - shift / zoom, point.y, { zoom, duration: 0 });
  }, [request, width, height]);
  return null;
}
