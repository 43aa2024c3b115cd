import { useCallback, useEffect, useState } from 'react';

/** The colour scheme the page is drawn in. */
export type Theme = 'light' | 'dark';

/**
 * How the page is laid out: the width of the chat list and of the context column (pixels), the
 * graph's share of the right column's height, which panes are folded away, and the theme. Kept
 * in localStorage, so a reload keeps the layout a person made.
 */
export interface Layout {
  chatsWidth: number;
  middleWidth: number;
  /**
   * The graph's share of the right column's height, in whole percent (20–90); the conversation
   * has the rest. Whole numbers, so the splitter reports clean values (`aria-valuemin` 10, not
   * the 0.09999999999999998 that `1 - 0.9` gives).
   */
  graphPercent: number;
  chatsCollapsed: boolean;
  middleCollapsed: boolean;
  conversationCollapsed: boolean;
  theme: Theme;
}

const STORAGE_KEY = 'ctxgraph-playground-layout';

/** The bounds each size is kept within (a dragged or stored size outside them is clamped). */
export const LAYOUT_BOUNDS = {
  chatsWidth: { min: 160, max: 420 },
  middleWidth: { min: 260, max: 760 },
  graphPercent: { min: 20, max: 90 },
} as const;

function clamp(value: number, bounds: { min: number; max: number }): number {
  return Math.min(bounds.max, Math.max(bounds.min, value));
}

/** The graph's percentage kept in storage: `graphPercent`, or an older page's `graphShare` (0–1). */
function storedGraphPercent(stored: Partial<Layout> & { graphShare?: unknown }): unknown {
  if (stored.graphPercent !== undefined) return stored.graphPercent;
  return typeof stored.graphShare === 'number' ? stored.graphShare * 100 : undefined;
}

function preferredTheme(): Theme {
  return typeof window !== 'undefined' &&
    window.matchMedia?.('(prefers-color-scheme: dark)').matches
    ? 'dark'
    : 'light';
}

function initialLayout(): Layout {
  const fallback: Layout = {
    chatsWidth: 220,
    middleWidth: 380,
    graphPercent: 50,
    chatsCollapsed: false,
    middleCollapsed: false,
    conversationCollapsed: false,
    theme: preferredTheme(),
  };
  try {
    const stored = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null') as
      | (Partial<Layout> & { graphShare?: unknown })
      | null;
    if (stored === null || typeof stored !== 'object') return fallback;
    const number = (value: unknown, otherwise: number) =>
      typeof value === 'number' && Number.isFinite(value) ? value : otherwise;
    return {
      chatsWidth: clamp(number(stored.chatsWidth, fallback.chatsWidth), LAYOUT_BOUNDS.chatsWidth),
      middleWidth: clamp(
        number(stored.middleWidth, fallback.middleWidth),
        LAYOUT_BOUNDS.middleWidth,
      ),
      graphPercent: Math.round(
        clamp(
          number(storedGraphPercent(stored), fallback.graphPercent),
          LAYOUT_BOUNDS.graphPercent,
        ),
      ),
      chatsCollapsed: stored.chatsCollapsed === true,
      middleCollapsed: stored.middleCollapsed === true,
      conversationCollapsed: stored.conversationCollapsed === true,
      theme: stored.theme === 'dark' || stored.theme === 'light' ? stored.theme : fallback.theme,
    };
  } catch {
    return fallback;
  }
}

/** What {@link useLayout} answers: the layout and the ways to change it. */
export interface LayoutState {
  layout: Layout;
  /** Changes some of the layout (sizes are clamped to {@link LAYOUT_BOUNDS}). */
  update: (change: Partial<Layout>) => void;
  /** Folds away the chat list, the context column and the conversation (or brings them back). */
  toggleGraphFocus: () => void;
  /** True while the graph has the page to itself. */
  graphFocused: boolean;
}

/** The page layout, kept in localStorage; the theme is set on `<html data-theme>`. */
export function useLayout(): LayoutState {
  const [layout, setLayout] = useState<Layout>(initialLayout);
  useEffect(() => {
    document.documentElement.dataset.theme = layout.theme;
    try {
      localStorage.setItem(STORAGE_KEY, JSON.stringify(layout));
    } catch {
      // A browser without storage still lays the page out; the layout is just not kept.
    }
  }, [layout]);
  const update = useCallback((change: Partial<Layout>) => {
    setLayout((old) => {
      const next = { ...old, ...change };
      next.chatsWidth = clamp(next.chatsWidth, LAYOUT_BOUNDS.chatsWidth);
      next.middleWidth = clamp(next.middleWidth, LAYOUT_BOUNDS.middleWidth);
      next.graphPercent = Math.round(clamp(next.graphPercent, LAYOUT_BOUNDS.graphPercent));
      return next;
    });
  }, []);
  const graphFocused =
    layout.chatsCollapsed && layout.middleCollapsed && layout.conversationCollapsed;
  const toggleGraphFocus = useCallback(() => {
    setLayout((old) => {
      const focused = old.chatsCollapsed && old.middleCollapsed && old.conversationCollapsed;
      return {
        ...old,
        chatsCollapsed: !focused,
        middleCollapsed: !focused,
        conversationCollapsed: !focused,
      };
    });
  }, []);
  return { layout, update, toggleGraphFocus, graphFocused };
}
