// The version a page shows, kept in its URL (`?node=…`), so a reload shows the same one.

/**
 * The node named in the page's URL (`?<parameter>=`), or null: pass it as `useCtxgraphChat`'s
 * `node`. Null outside a browser.
 * @param parameter the query parameter @default 'node'
 */
export function readNodeFromUrl(parameter = 'node'): string | null {
  if (typeof location === 'undefined') return null;
  const value = new URLSearchParams(location.search).get(parameter);
  return value === '' ? null : value;
}

/**
 * Writes `node` into the page's URL (`?<parameter>=`, removed for null) with
 * `history.replaceState`, keeping the rest of the URL: pass it as `useCtxgraphChat`'s
 * `onNodeChange`. Does nothing outside a browser.
 * @param parameter the query parameter @default 'node'
 */
export function writeNodeToUrl(node: string | null, parameter = 'node'): void {
  if (typeof location === 'undefined' || typeof history === 'undefined') return;
  const url = new URL(location.href);
  if (node === null) url.searchParams.delete(parameter);
  else url.searchParams.set(parameter, node);
  if (url.href !== location.href) history.replaceState(history.state, '', url);
}
