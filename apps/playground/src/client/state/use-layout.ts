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
  /** The graph's share of the right column (0.2–0.9); the conversation has the rest. */
  graphShare: number;
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
  graphShare: { min: 0.2, max: 0.9 },
} as const;

function clamp(value: number, bounds: { min: number; max: number }): number {
  return Math.min(bounds.max, Math.max(bounds.min, value));
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
    graphShare: 0.5,
    chatsCollapsed: false,
    middleCollapsed: false,
    conversationCollapsed: false,
    theme: preferredTheme(),
  };
  try {
    const stored = JSON.parse(
      localStorage.getItem(STORAGE_KEY) ?? 'null',
    ) as Partial<Layout> | null;
    if (stored === null || typeof stored !== 'object') return fallback;
    const number = (value: unknown, otherwise: number) =>
      typeof value === 'number' && Number.isFinite(value) ? value : otherwise;
    return {
      chatsWidth: clamp(number(stored.chatsWidth, fallback.chatsWidth), LAYOUT_BOUNDS.chatsWidth),
      middleWidth: clamp(
        number(stored.middleWidth, fallback.middleWidth),
        LAYOUT_BOUNDS.middleWidth,
      ),
      graphShare: clamp(number(stored.graphShare, fallback.graphShare), LAYOUT_BOUNDS.graphShare),
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
      next.graphShare = clamp(next.graphShare, LAYOUT_BOUNDS.graphShare);
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
