import { type ReactElement, useEffect, useRef, useState } from 'react';
import type { SearchResults } from '../api';
import { describeError } from '../describe-error';

/** Props of {@link GraphSearch}. */
export interface GraphSearchProps {
  /** Runs the engine's search over the active branch or the whole chat (a page at `cursor`). */
  onSearch: (query: string, scope: 'branch' | 'chat', cursor?: string) => Promise<SearchResults>;
  /** Selects a hit's message in the graph and brings it into view. */
  onPick: (messageId: string) => void;
}

/** How long typing must pause before the search runs. */
const SEARCH_DEBOUNCE_MS = 250;

type Hit = SearchResults['items'][number];

/**
 * A search box over the chat's messages, searching as you type (after a short pause). The
 * results popover says how many were found, fetches more a page at a time, and closes on
 * Escape, on a click outside it, or when a hit is picked (which jumps to its message in the
 * graph). `/` anywhere on the page focuses the box.
 */
export function GraphSearch(props: GraphSearchProps): ReactElement {
  const { onSearch } = props;
  const [query, setQuery] = useState('');
  const [scope, setScope] = useState<'branch' | 'chat'>('branch');
  const [hits, setHits] = useState<Hit[] | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState(false);
  const box = useRef<HTMLDivElement>(null);
  /** Counts the searches started, so an older answer arriving late is dropped. */
  const generation = useRef(0);

  // Search as you type: each change waits for a pause, and only the newest search is shown. An
  // answer never opens the popover (typing and focus do): one that arrives after Escape or a
  // click outside fills it without showing it again.
  useEffect(() => {
    const trimmed = query.trim();
    const mine = ++generation.current;
    if (trimmed === '') {
      setHits(null);
      setNextCursor(null);
      setError(null);
      return;
    }
    const timer = setTimeout(() => {
      onSearch(trimmed, scope)
        .then((page) => {
          if (mine !== generation.current) return;
          setError(null);
          setHits([...page.items]);
          setNextCursor(page.nextCursor ?? null);
        })
        .catch((failure: unknown) => {
          if (mine !== generation.current) return;
          setHits(null);
          setError(describeError(failure).message);
        });
    }, SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [query, scope, onSearch]);

  // A click (or focus) outside the box and its results closes the popover.
  useEffect(() => {
    if (!open) return;
    const onOutside = (event: Event) => {
      if (box.current && !box.current.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener('pointerdown', onOutside);
    document.addEventListener('focusin', onOutside);
    return () => {
      document.removeEventListener('pointerdown', onOutside);
      document.removeEventListener('focusin', onOutside);
    };
  }, [open]);

  const more = async () => {
    if (nextCursor === null) return;
    const mine = generation.current;
    try {
      const page = await onSearch(query.trim(), scope, nextCursor);
      if (mine !== generation.current) return;
      setHits((old) => [...(old ?? []), ...page.items]);
      setNextCursor(page.nextCursor ?? null);
    } catch (failure) {
      setError(describeError(failure).message);
    }
  };

  const pick = (hit: Hit) => {
    props.onPick(hit.messageId);
    setOpen(false);
  };

  const showing = open && (error !== null || hits !== null);
  const where = scope === 'branch' ? 'on this branch' : 'in this chat';
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: Escape from any control inside closes the results
    <div
      className="graph-search"
      ref={box}
      onKeyDown={(event) => {
        if (event.key === 'Escape' && showing) {
          // The popover closes first; the next Escape closes what is behind it.
          event.preventDefault();
          event.stopPropagation();
          setOpen(false);
        }
      }}
    >
      <form
        className="inline"
        aria-label="Message search"
        onSubmit={(event) => {
          event.preventDefault();
          const first = hits?.[0];
          if (first) pick(first);
        }}
      >
        <input
          id="graph-search-input"
          type="search"
          aria-label="Search messages"
          aria-controls="graph-search-results"
          placeholder="Search messages… ( / )"
          title="Finds words as you type: the last word you type matches the start of a word (“fib” finds “fibonacci”). Enter jumps to the first hit; / focuses this box from anywhere."
          value={query}
          onFocus={() => setOpen(true)}
          onChange={(event) => {
            setQuery(event.target.value);
            setOpen(true);
          }}
          onKeyDown={(event) => {
            if (event.key === 'ArrowDown' && showing) {
              event.preventDefault();
              box.current?.querySelector<HTMLElement>('.search-hit')?.focus();
            }
          }}
        />
        <select
          aria-label="Search in"
          value={scope}
          title="Search the branch you are on, or every branch of the chat"
          onChange={(event) => setScope(event.target.value === 'chat' ? 'chat' : 'branch')}
        >
          <option value="branch">this branch</option>
          <option value="chat">whole chat</option>
        </select>
      </form>
      {showing ? (
        <section className="search-results" id="graph-search-results" aria-label="Search results">
          {error ? <p className="inline-error">{error}</p> : null}
          {hits !== null ? (
            <p className="muted small menu-note" data-testid="search-count" aria-live="polite">
              {hits.length === 0
                ? `Nothing found ${where}.`
                : `${hits.length} ${hits.length === 1 ? 'message' : 'messages'} found ${where}${nextCursor !== null ? ', more to load' : ''}.`}
            </p>
          ) : null}
          <ul className="search-hits">
            {hits?.map((hit, index) => (
              <li key={hit.messageId}>
                <button
                  type="button"
                  className="search-hit"
                  onClick={() => pick(hit)}
                  onKeyDown={(event) => {
                    const items = [
                      ...(box.current?.querySelectorAll<HTMLElement>('.search-hit') ?? []),
                    ];
                    if (event.key === 'ArrowDown') {
                      event.preventDefault();
                      items[index + 1]?.focus();
                    } else if (event.key === 'ArrowUp') {
                      event.preventDefault();
                      (items[index - 1] ?? document.getElementById('graph-search-input'))?.focus();
                    }
                  }}
                >
                  <span className={`dot ${hit.role}`} />
                  <span className="search-snippet">{hit.snippet}</span>
                  <span className="muted small">{hit.branches.join(', ') || 'no branch'}</span>
                </button>
              </li>
            ))}
          </ul>
          {nextCursor !== null ? (
            <button type="button" className="link" onClick={() => void more()}>
              Load more results
            </button>
          ) : null}
        </section>
      ) : null}
    </div>
  );
}
