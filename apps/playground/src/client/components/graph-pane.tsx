import { Graph, layout } from '@dagrejs/dagre';
import {
  Background,
  ControlButton,
  Controls,
  type Edge,
  MiniMap,
  type Node,
  ReactFlow,
  useReactFlow,
  useStore,
} from '@xyflow/react';
import { type ReactElement, type RefObject, useEffect, useMemo, useRef, useState } from 'react';
import type { ChatView, SearchResults } from '../api';
import { collapseGraph, compactedSpan, type DisplayGraph, type GraphItem } from '../graph-model';
import { GraphSearch } from './graph-search';
import { BranchIcon, SummaryIcon, TargetIcon } from './icons';
import { NodeCard } from './node-card';

/** Props of {@link GraphPane}. */
export interface GraphPaneProps {
  view: ChatView;
  busy: boolean;
  /** Starts a new branch at the message and switches to it. */
  onRewind: (messageId: string) => void;
  /** Names a message (the head when `messageId` is null) so it can be restored later. */
  onCheckpoint: (name: string, messageId: string | null) => void;
  onRestore: (name: string) => void;
  onBtw: () => void;
  onSwitch: (branch: string) => void;
  /** Opens the comparison of two branches. */
  onCompare: (left: string, right: string) => void;
  /** Opens the branch deletion (with its dry-run preview), offering `branch` first. */
  onDeleteBranch: (branch: string) => void;
  /** Runs the engine's search over the active branch or the whole chat. */
  onSearch: (query: string, scope: 'branch' | 'chat') => Promise<SearchResults>;
}

const NODE_WIDTH = 200;
const NODE_HEIGHT = 56;
const RUN_HEIGHT = 34;
/** How far right of the centre a selected message is drawn, clear of its card on the left. */
const CARD_SHIFT = 150;
/** How many messages each end of a long folded run shows per click. */
const REVEAL_STEP = 10;

interface Placed {
  nodes: Node[];
  edges: Edge[];
  centres: Map<string, { x: number; y: number }>;
}

/** Lays the drawn graph out top to bottom with dagre. */
function place(display: DisplayGraph, activeBranch: string, selectedId: string | null): Placed {
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
    };
  });
  const edges: Edge[] = display.links.map((link) => ({
    id: link.id,
    source: link.source,
    target: link.target,
    className: link.onBranch ? 'on-branch' : 'off-branch',
  }));
  return { nodes, edges, centres };
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
function LabelScale(props: { target: RefObject<HTMLDivElement | null> }): null {
  const zoom = useStore((state) => state.transform[2]);
  useEffect(() => {
    props.target.current?.style.setProperty('--label-scale', String(Math.max(1, 0.9 / zoom)));
  }, [zoom, props.target]);
  return null;
}

/** Centres the view on a point whenever `request` changes (the head moved, a node was asked for). */
function CentreOn(props: {
  point: { x: number; y: number } | null;
  request: string;
  /** Screen pixels to move the point right of the centre (to clear the message card). */
  shift: number;
}): null {
  const flow = useReactFlow();
  const { point, request, shift } = props;
  // biome-ignore lint/correctness/useExhaustiveDependencies: centre once per request, not per layout
  useEffect(() => {
    if (point === null) return;
    const zoom = Math.max(flow.getZoom(), 0.8);
    void flow.setCenter(point.x - shift / zoom, point.y, { zoom, duration: 0 });
  }, [request]);
  return null;
}

/**
 * A branch other than the active one whose history holds the message (for "compare with the
 * current branch"), or null. Walks up from each branch head; the graph is already on the page.
 */
function otherBranchThrough(view: ChatView, messageId: string): string | null {
  const parents = new Map(view.graph.nodes.map((node) => [node.id, node.parentId]));
  for (const branch of view.graph.branches) {
    if (branch.name === view.branch) continue;
    for (let id = branch.headMessageId; id !== null; id = parents.get(id) ?? null) {
      if (id === messageId) return branch.name;
    }
  }
  return null;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : noun.endsWith('h') ? 'es' : 's'}`;
}

/**
 * The chat's message graph: long linear runs folded, the active branch's path emphasized, the view
 * centred on the current message, a minimap. Clicking a message selects it (its card offers the
 * actions); clicking a folded run unfolds it. Nothing changes in the store on a click.
 */
export function GraphPane(props: GraphPaneProps): ReactElement {
  const { view } = props;
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  /** Messages of long runs shown one step at a time (each click on a long run shows 20 more). */
  const [revealed, setRevealed] = useState<ReadonlySet<string>>(new Set());
  const [centreRequest, setCentreRequest] = useState<{ id: string; nonce: number } | null>(null);
  const canvas = useRef<HTMLDivElement>(null);
  const checkpointMenu = useRef<HTMLDetailsElement>(null);
  const headId = view.headMessageId;
  // The active branch's path: the head and its ancestors (not the resolved messages, which a
  // compaction shortens).
  const activeIds = useMemo(() => {
    const parents = new Map(view.graph.nodes.map((node) => [node.id, node.parentId]));
    const path = new Set<string>();
    for (let id = headId; id !== null && !path.has(id); id = parents.get(id) ?? null) path.add(id);
    return path;
  }, [view.graph.nodes, headId]);

  // A new head (a message saved, another branch): the view follows it, not an older request.
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the head moves
  useEffect(() => {
    setCentreRequest(null);
  }, [headId, view.branch]);
  const selected =
    selectedId === null ? null : (view.graph.nodes.find((node) => node.id === selectedId) ?? null);

  // Another chat: forget the selection and the unfolded runs.
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset on chat change only
  useEffect(() => {
    setSelectedId(null);
    setExpanded(new Set());
    setRevealed(new Set());
  }, [view.chat.id]);

  const display = useMemo(
    () =>
      collapseGraph(
        {
          nodes: view.graph.nodes,
          branches: view.graph.branches,
          checkpoints: view.graph.checkpoints,
          activeIds,
          headId,
        },
        { expanded, pinned: selectedId ? new Set([...revealed, selectedId]) : revealed },
      ),
    [view.graph, activeIds, headId, expanded, revealed, selectedId],
  );
  const placed = useMemo(
    () => place(display, view.branch, selectedId),
    [display, view.branch, selectedId],
  );

  const centreId = centreRequest?.id ?? headId;
  const centreItem = centreId === null ? undefined : display.itemOf.get(centreId);
  const centrePoint = centreItem === undefined ? null : (placed.centres.get(centreItem) ?? null);
  const request = centreRequest
    ? `focus:${centreRequest.id}:${centreRequest.nonce}`
    : `head:${view.chat.id}:${view.branch}:${headId}`;

  const clickItem = (id: string) => {
    const run = display.items.find((item) => item.id === id);
    if (run?.kind === 'run') {
      // A short run unfolds at once; a long one shows its first and last messages, the rest
      // staying folded between them (one more click shows more).
      if (run.messageIds.length <= 2 * REVEAL_STEP + 10)
        setExpanded((old) => new Set([...old, id]));
      else {
        const ends = [
          ...run.messageIds.slice(0, REVEAL_STEP),
          ...run.messageIds.slice(-REVEAL_STEP),
        ];
        setRevealed((old) => new Set([...old, ...ends]));
      }
      return;
    }
    const next = selectedId === id ? null : id;
    setSelectedId(next);
    if (next !== null) setCentreRequest({ id: next, nonce: Date.now() });
  };

  return (
    <section className="panel graph-panel" aria-label="Graph">
      <header className="panel-header">
        <h2>Graph</h2>
        <span className="muted small" title="Select a message for its actions">
          {plural(view.graph.nodes.length, 'message')} ·{' '}
          {plural(view.graph.branches.length, 'branch')}
        </span>
        <span className="grow" />
        <GraphSearch
          onSearch={props.onSearch}
          onPick={(messageId) => {
            setSelectedId(messageId);
            setCentreRequest({ id: messageId, nonce: Date.now() });
          }}
        />
      </header>
      <div className="graph-toolbar">
        <label className="inline" title="The branch you are on">
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
          disabled={props.busy || headId === null}
          onClick={props.onBtw}
          title="Side branch (“by the way”): start a new branch at the current message for a digression, and stay on this one"
        >
          Side branch
        </button>
        <button
          type="button"
          disabled={view.graph.branches.length < 2}
          title="Two branches side by side, from the message they share"
          onClick={() =>
            props.onCompare(
              view.branch,
              view.graph.branches.find((branch) => branch.name !== view.branch)?.name ??
                view.branch,
            )
          }
        >
          Compare…
        </button>
        <button
          type="button"
          disabled={props.busy || view.graph.branches.length < 2}
          title="Delete a branch and the messages only it reached (shows what would go first)"
          onClick={() => props.onDeleteBranch(view.branch)}
        >
          Delete…
        </button>
        <span className="divider" />
        <details className="menu toolbar-menu" ref={checkpointMenu}>
          <summary aria-label="Checkpoints">
            ⚑ Checkpoints <span className="count">{view.graph.checkpoints.length}</span> ▾
          </summary>
          <div className="menu-items checkpoint-menu">
            <button
              type="button"
              disabled={headId === null}
              onClick={() => {
                checkpointMenu.current?.removeAttribute('open');
                if (headId === null) return;
                setSelectedId(headId);
                setCentreRequest({ id: headId, nonce: Date.now() });
              }}
              title="Select the current message; name it in its card"
            >
              New checkpoint at the current message…
            </button>
            {view.graph.checkpoints.length === 0 ? (
              <p className="muted small menu-note">No checkpoints yet.</p>
            ) : null}
            {view.graph.checkpoints.map((checkpoint) => (
              <div key={checkpoint.name} className="checkpoint-row">
                <button
                  type="button"
                  className="checkpoint-name"
                  title="Show this checkpoint's message"
                  onClick={() => {
                    checkpointMenu.current?.removeAttribute('open');
                    setSelectedId(checkpoint.messageId);
                    setCentreRequest({ id: checkpoint.messageId, nonce: Date.now() });
                  }}
                >
                  ⚑ {checkpoint.name}
                </button>
                <button
                  type="button"
                  disabled={props.busy}
                  aria-label={`Restore ${checkpoint.name}`}
                  title="Go back to this checkpoint, on a new branch"
                  onClick={() => {
                    checkpointMenu.current?.removeAttribute('open');
                    props.onRestore(checkpoint.name);
                  }}
                >
                  Restore
                </button>
              </div>
            ))}
          </div>
        </details>
      </div>
      <div className="graph-canvas" ref={canvas} data-testid="graph-canvas">
        {view.graph.nodes.length === 0 ? (
          <p className="muted center">The graph fills in as messages are saved.</p>
        ) : (
          <ReactFlow
            key={view.chat.id}
            nodes={placed.nodes}
            edges={placed.edges}
            minZoom={0.1}
            maxZoom={1.6}
            nodesDraggable={false}
            nodesConnectable={false}
            onlyRenderVisibleElements
            onNodeClick={(_event, node) => clickItem(node.id)}
            proOptions={{ hideAttribution: true }}
          >
            <Background gap={18} size={1} />
            <Controls showInteractive={false} position="bottom-left">
              <ControlButton
                onClick={() => {
                  if (headId !== null) setCentreRequest({ id: headId, nonce: Date.now() });
                }}
                title="Bring the current message into view"
                aria-label="Centre on the current message"
              >
                <TargetIcon />
              </ControlButton>
            </Controls>
            <MiniMap
              pannable
              zoomable
              position="bottom-right"
              style={{ width: 120, height: 84 }}
              ariaLabel="Minimap of the graph"
              nodeColor={(node) =>
                node.className?.includes('current-head')
                  ? '#f59e0b'
                  : node.className?.includes('on-branch')
                    ? '#818cf8'
                    : '#c4c9d4'
              }
            />
            <LabelScale target={canvas} />
            <CentreOn point={centrePoint} request={request} shift={selected ? CARD_SHIFT : 0} />
          </ReactFlow>
        )}
        {selected ? (
          <NodeCard
            node={selected}
            isHead={selected.id === headId}
            onBranch={activeIds.has(selected.id)}
            branches={view.graph.branches
              .filter((branch) => branch.headMessageId === selected.id)
              .map((branch) => branch.name)}
            checkpoints={view.graph.checkpoints
              .filter((checkpoint) => checkpoint.messageId === selected.id)
              .map((checkpoint) => checkpoint.name)}
            busy={props.busy}
            onClose={() => setSelectedId(null)}
            onRewind={() => props.onRewind(selected.id)}
            onCheckpoint={(name) => props.onCheckpoint(name, selected.id)}
            compareWith={otherBranchThrough(view, selected.id)}
            onCompare={(branch) => props.onCompare(branch, view.branch)}
            span={
              selected.compaction === null
                ? null
                : compactedSpan(view.graph.nodes, selected.compaction)
            }
            onShowSpan={(span) => {
              const ends = [...span.slice(0, REVEAL_STEP), ...span.slice(-REVEAL_STEP)];
              setRevealed((old) => new Set([...old, ...ends.map((node) => node.id)]));
              const boundary = span.at(-1);
              if (boundary) setCentreRequest({ id: boundary.id, nonce: Date.now() });
            }}
          />
        ) : null}
      </div>
    </section>
  );
}
