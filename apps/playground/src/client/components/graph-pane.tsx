import { Background, ControlButton, Controls, MiniMap, ReactFlow } from '@xyflow/react';
import {
  type CSSProperties,
  type KeyboardEvent,
  type ReactElement,
  useEffect,
  useMemo,
  useRef,
  useState,
} from 'react';
import type { ChatView, SearchResults, VersionsAnswer } from '../api';
import { collapseGraph, compactedSpan, type DisplayGraph, versionPositions } from '../graph-model';
import { CentreOn, KeepInPlace, LabelScale, place } from './graph-layout';
import { GraphSearch } from './graph-search';
import { GraphToolbar } from './graph-toolbar';
import { TargetIcon } from './icons';
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
  onRenameBranch: (branch: string) => void;
  /** Runs the engine's search over the active branch or the whole chat (a page at `cursor`). */
  onSearch: (query: string, scope: 'branch' | 'chat', cursor?: string) => Promise<SearchResults>;
  /** A message's versions (the engine's `versions()`), for the inspector's versions switch. */
  onVersions: (nodeId: string) => Promise<VersionsAnswer>;
  /** Its size in the column (set by the layout). */
  style?: CSSProperties;
  /** A dialog is open: Escape is the dialog's, and the inspector stays. */
  dialogOpen: boolean;
  /** The page's theme (React Flow draws its controls and minimap in it). */
  theme: 'light' | 'dark';
}

/** How many messages each end of a long folded run shows per click. */
const REVEAL_STEP = 10;

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

/** Every branch whose history holds the message (its head or a descendant of it is a head). */
function branchesThrough(view: ChatView, messageId: string): string[] {
  const parents = new Map(view.graph.nodes.map((node) => [node.id, node.parentId]));
  const through: string[] = [];
  for (const branch of view.graph.branches) {
    for (let id = branch.headMessageId; id !== null; id = parents.get(id) ?? null) {
      if (id === messageId) {
        through.push(branch.name);
        break;
      }
    }
  }
  return through;
}

/** What the arrow keys do on a focused graph node: the item they move the focus to, or null. */
function neighbour(display: DisplayGraph, itemId: string, key: string): string | null {
  if (key === 'ArrowUp')
    return display.links.find((link) => link.target === itemId)?.source ?? null;
  if (key === 'ArrowDown') {
    const children = display.links.filter((link) => link.source === itemId);
    return (children.find((link) => link.onBranch) ?? children[0])?.target ?? null;
  }
  if (key === 'ArrowLeft' || key === 'ArrowRight') {
    const parent = display.links.find((link) => link.target === itemId)?.source;
    if (parent === undefined) return null;
    const siblings = display.links
      .filter((link) => link.source === parent)
      .map((link) => link.target);
    const at = siblings.indexOf(itemId) + (key === 'ArrowLeft' ? -1 : 1);
    return siblings[at] ?? null;
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
  /**
   * The selection as the last click left it: two clicks that come before a render (a double
   * click on a busy page) each toggle from the one before, not both from the rendered state.
   */
  const clickedSelection = useRef<string | null>(null);
  clickedSelection.current = selectedId;
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  /** Messages of long runs shown one step at a time (each click on a long run shows 20 more). */
  const [revealed, setRevealed] = useState<ReadonlySet<string>>(new Set());
  const [centreRequest, setCentreRequest] = useState<{ id: string; nonce: number } | null>(null);
  /** The graph item the keyboard is on (the one tab stop among the nodes), or null. */
  const [keyboardId, setKeyboardId] = useState<string | null>(null);
  /** An item to move the focus to once it is drawn (after the arrow keys moved to it). */
  const pendingFocus = useRef<string | null>(null);
  const canvas = useRef<HTMLDivElement>(null);
  const headId = view.headMessageId;
  // The active branch's path: the head and its ancestors (not the resolved messages, which a
  // compaction shortens).
  const activeIds = useMemo(() => {
    const parents = new Map(view.graph.nodes.map((node) => [node.id, node.parentId]));
    const path = new Set<string>();
    for (let id = headId; id !== null && !path.has(id); id = parents.get(id) ?? null) path.add(id);
    return path;
  }, [view.graph.nodes, headId]);

  // A new head (a message saved, another branch): the view follows it, not an older request,
  // and the graph's tab stop goes back to it (Tab reaches the new current message).
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the head moves
  useEffect(() => {
    setCentreRequest(null);
    setKeyboardId(null);
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

  // The graph's "2/3" badges and the inspector's versions switch read the same positions.
  const versions = useMemo(() => versionPositions(view.graph.nodes), [view.graph.nodes]);
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
  // The one node the Tab key stops at: the one the keyboard is on, else the selected message,
  // else the head.
  const keyboardItem =
    keyboardId !== null && display.items.some((item) => item.id === keyboardId) ? keyboardId : null;
  const selectedItem = selectedId === null ? undefined : display.itemOf.get(selectedId);
  const headItem = headId === null ? undefined : display.itemOf.get(headId);
  const tabStop = keyboardItem ?? selectedItem ?? headItem ?? null;
  const placed = useMemo(
    () => place(display, view.branch, selectedId, tabStop),
    [display, view.branch, selectedId, tabStop],
  );

  // The canvas's size, for the smallest zoom: Fit View must fit the whole graph however tall an
  // unfolded chat grows, so the zoom may go below 0.1 when the graph asks for it.
  const [canvasSize, setCanvasSize] = useState({ width: 0, height: 0 });
  useEffect(() => {
    const element = canvas.current;
    if (element === null) return;
    const observer = new ResizeObserver(() =>
      setCanvasSize({ width: element.clientWidth, height: element.clientHeight }),
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  const fitZoom =
    canvasSize.width === 0 || placed.size.width === 0 || placed.size.height === 0
      ? 0.1
      : Math.min(canvasSize.width / placed.size.width, canvasSize.height / placed.size.height);
  const minZoom = Math.max(0.005, Math.min(0.1, fitZoom * 0.75));
  const headPoint = headItem === undefined ? null : (placed.centres.get(headItem) ?? null);

  const centreId = centreRequest?.id ?? headId;
  const centreItem =
    centreId === null
      ? undefined
      : (display.itemOf.get(centreId) ??
        (display.items.some((item) => item.id === centreId) ? centreId : undefined));
  const centrePoint = centreItem === undefined ? null : (placed.centres.get(centreItem) ?? null);
  const request = centreRequest
    ? `focus:${centreRequest.id}:${centreRequest.nonce}`
    : `head:${view.chat.id}:${view.branch}:${headId}`;

  /** Selects a message and brings it into view. */
  const focus = (messageId: string) => {
    setSelectedId(messageId);
    setCentreRequest({ id: messageId, nonce: Date.now() });
  };

  /**
   * Moves the keyboard to a message's node (the graph's tab stop, and the focus once it is
   * drawn): after an action whose control goes away or is disabled (a search hit picked, a menu
   * item, Branch from here), the focus would otherwise fall to the page, where the arrow keys
   * do nothing.
   */
  const focusNode = (messageId: string) => {
    const item = display.itemOf.get(messageId) ?? messageId;
    setKeyboardId(item);
    pendingFocus.current = item;
  };

  /** Selects a message, brings it into view, and puts the focus on its node. */
  const focusAndMove = (messageId: string) => {
    focus(messageId);
    // Selecting pins the message: drawn as its own node, even inside a folded run.
    setKeyboardId(messageId);
    pendingFocus.current = messageId;
  };

  // F2 renames the branch you are on (the toolbar's Rename…, many Tab stops away), from
  // anywhere but an open dialog.
  const { busy, onRenameBranch } = props;
  useEffect(() => {
    if (props.dialogOpen || busy) return;
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (event.key !== 'F2' || event.defaultPrevented) return;
      if (event.ctrlKey || event.metaKey || event.altKey || event.shiftKey) return;
      event.preventDefault();
      onRenameBranch(view.branch);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [props.dialogOpen, busy, onRenameBranch, view.branch]);

  // Escape closes the inspector (unless a dialog, which has its own Escape, is open).
  useEffect(() => {
    if (selectedId === null || props.dialogOpen) return;
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (event.key !== 'Escape' || event.defaultPrevented) return;
      const item = display.itemOf.get(selectedId);
      setSelectedId(null);
      // Back to the node it was opened from, so the keyboard carries on from there.
      if (item !== undefined) {
        setKeyboardId(item);
        pendingFocus.current = item;
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [selectedId, props.dialogOpen, display]);

  // Moves the focus to the node the arrow keys went to, once React Flow has drawn it (it draws
  // only the nodes in view, and the view was just centred on it).
  useEffect(() => {
    const target = pendingFocus.current;
    if (target === null) return;
    let frames = 0;
    let handle = 0;
    const attempt = () => {
      const element = canvas.current?.querySelector<HTMLElement>(
        `.react-flow__node[data-id="${CSS.escape(target)}"]`,
      );
      if (element) {
        element.focus({ preventScroll: true });
        pendingFocus.current = null;
      } else if (frames++ < 120) handle = requestAnimationFrame(attempt);
    };
    attempt();
    return () => cancelAnimationFrame(handle);
  });

  const onGraphKey = (event: KeyboardEvent<HTMLDivElement>) => {
    const element = (event.target as HTMLElement).closest<HTMLElement>('.react-flow__node');
    const id = element?.dataset.id;
    if (id === undefined) return;
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      setKeyboardId(id);
      const first = clickItem(id);
      // The run's node goes as it unfolds: the keyboard goes on from its first message.
      if (first !== null) {
        setKeyboardId(first);
        pendingFocus.current = first;
        setCentreRequest({ id: first, nonce: Date.now() });
      }
      return;
    }
    const next = neighbour(display, id, event.key);
    if (next === null) return;
    event.preventDefault();
    setKeyboardId(next);
    pendingFocus.current = next;
    setCentreRequest({ id: next, nonce: Date.now() });
  };

  /** Opens a message in the inspector, or unfolds a run (answering its first message, else null). */
  const clickItem = (id: string): string | null => {
    const run = display.items.find((item) => item.id === id);
    if (run?.kind === 'run') {
      // A short run unfolds at once; a long one shows its first and last messages, the rest
      // staying folded between them (one more click shows more).
      setKeyboardId(null);
      if (run.messageIds.length <= 2 * REVEAL_STEP + 10)
        setExpanded((old) => new Set([...old, id]));
      else {
        const ends = [
          ...run.messageIds.slice(0, REVEAL_STEP),
          ...run.messageIds.slice(-REVEAL_STEP),
        ];
        setRevealed((old) => new Set([...old, ...ends]));
      }
      return run.messageIds[0] ?? null;
    }
    const next = clickedSelection.current === id ? null : id;
    clickedSelection.current = next;
    setSelectedId(next);
    if (next !== null) setCentreRequest({ id: next, nonce: Date.now() });
    return null;
  };

  return (
    <section className="panel graph-panel" aria-label="Graph" style={props.style}>
      <header className="panel-header">
        <h2>Graph</h2>
        <span className="muted small" title="Select a message for its actions">
          {plural(view.graph.nodes.length, 'message')} ·{' '}
          {plural(view.graph.branches.length, 'branch')}
        </span>
        <span className="grow" />
        <GraphSearch onSearch={props.onSearch} onPick={focusAndMove} />
      </header>
      <GraphToolbar
        view={view}
        busy={props.busy}
        onSwitch={props.onSwitch}
        onBtw={props.onBtw}
        onCompare={props.onCompare}
        onDeleteBranch={props.onDeleteBranch}
        onRenameBranch={props.onRenameBranch}
        onRestore={props.onRestore}
        onFocus={focusAndMove}
      />
      <div className="graph-body">
        {/* biome-ignore lint/a11y/noStaticElementInteractions: the keys act on the focused node inside */}
        <div
          className="graph-canvas"
          ref={canvas}
          data-testid="graph-canvas"
          onKeyDown={onGraphKey}
        >
          {view.graph.nodes.length === 0 ? (
            <p className="muted center">The graph fills in as messages are saved.</p>
          ) : (
            <ReactFlow
              key={view.chat.id}
              nodes={placed.nodes}
              edges={placed.edges}
              minZoom={minZoom}
              maxZoom={1.6}
              nodesDraggable={false}
              nodesConnectable={false}
              onlyRenderVisibleElements
              edgesFocusable={false}
              colorMode={props.theme}
              elementsSelectable={false}
              ariaLabelConfig={{
                'node.a11yDescription.default':
                  'Enter or Space opens the message in the inspector (or unfolds a folded run). The arrow keys move along the chain: up to the parent, down to the child, left and right between siblings.',
              }}
              onNodeClick={(_event, node) => {
                setKeyboardId(node.id);
                clickItem(node.id);
              }}
              proOptions={{ hideAttribution: true }}
            >
              <Background gap={18} size={1} />
              <Controls
                showInteractive={false}
                position="bottom-left"
                fitViewOptions={{ padding: 0.1, minZoom }}
              >
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
              <KeepInPlace point={headPoint} anchor={`${view.chat.id}:${view.branch}:${headId}`} />
              <CentreOn point={centrePoint} request={request} shift={0} />
            </ReactFlow>
          )}
        </div>
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
            through={branchesThrough(view, selected.id)}
            hasVersions={versions.has(selected.id)}
            graphSize={view.graph.nodes.length}
            onVersions={props.onVersions}
            onSelectVersion={focus}
            onOpenVersion={(leafNodeId) => {
              const branch = view.graph.branches.find(
                (record) => record.headMessageId === leafNodeId,
              );
              // The button goes once this version is on the branch: the focus stays on its node.
              focusNode(selected.id);
              if (branch) props.onSwitch(branch.name);
              else props.onRewind(leafNodeId);
            }}
            activeIds={activeIds}
            onClose={() => {
              const item = display.itemOf.get(selected.id);
              setSelectedId(null);
              if (item !== undefined) {
                setKeyboardId(item);
                pendingFocus.current = item;
              }
            }}
            onRewind={() => {
              // The button is disabled while the branch is made: the focus goes to the node,
              // the new branch's current message.
              focusNode(selected.id);
              props.onRewind(selected.id);
            }}
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
