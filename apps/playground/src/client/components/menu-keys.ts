import type { KeyboardEvent } from 'react';

/**
 * Escape in a menu drawn as `<details>` (its `<summary>` the menu button): closes the menu and
 * gives the focus back to its button, as a menu button does. Anything else, or a closed menu, is
 * left alone, so Escape goes on to close what is behind it.
 */
export function closeMenuOnEscape(event: KeyboardEvent<HTMLDetailsElement>): void {
  const menu = event.currentTarget;
  if (event.key !== 'Escape' || !menu.open) return;
  event.preventDefault();
  event.stopPropagation();
  menu.open = false;
  menu.querySelector<HTMLElement>(':scope > summary')?.focus();
}
