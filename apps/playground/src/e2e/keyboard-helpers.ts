import type { Page } from 'playwright-core';

/* Reading and walking the page with the keyboard, for the browser suites. */

/** The accessible name of the focused element (aria-label, its label, or its text). */
export function focusedName(page: Page): Promise<string> {
  return page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    if (element === null || element === document.body) return '';
    return (
      element.getAttribute('aria-label') ??
      (element as HTMLInputElement).labels?.[0]?.textContent ??
      element.textContent ??
      ''
    )
      .replace(/\s+/g, ' ')
      .trim();
  });
}

/**
 * Presses Tab (or Shift+Tab) until the focused control's name matches, the way a person walks
 * the page, and answers how many presses it took; fails when a whole round of the page never
 * reaches it.
 */
export async function tabTo(
  page: Page,
  name: string | RegExp,
  options: { back?: boolean; max?: number } = {},
): Promise<number> {
  const matches = (found: string) => (typeof name === 'string' ? found === name : name.test(found));
  if (matches(await focusedName(page))) return 0;
  const seen: string[] = [];
  for (let step = 0; step < (options.max ?? 200); step += 1) {
    await page.keyboard.press(options.back ? 'Shift+Tab' : 'Tab');
    const found = await focusedName(page);
    if (matches(found)) return step + 1;
    seen.push(found);
  }
  throw new Error(
    `"${name}" was never reached with Tab; passed: ${[...new Set(seen)].join(' | ')}`,
  );
}

/**
 * From the graph's tab stop (the selected message, else the current one), presses an arrow key
 * until the focused node's name matches.
 */
export async function arrowTo(page: Page, key: string, name: RegExp): Promise<void> {
  await tabTo(page, /^(Message \d+|Summary of|Folded run)/);
  for (let step = 0; step < 20; step += 1) {
    if (name.test(await focusedName(page))) return;
    await page.keyboard.press(key);
  }
  throw new Error(`${key} never reached a node named ${name}`);
}
