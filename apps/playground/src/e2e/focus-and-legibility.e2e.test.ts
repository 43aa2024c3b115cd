import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedLongChat } from '../server/seed-long-chat';
import { type RunningPlayground, startPlayground } from '../server/start-server';
import { buildClient, chromiumInstalled, launchBrowser } from './browser-harness';
import { focusedName, tabTo } from './keyboard-helpers';

/*
 * The playground items of issue #37, in real Chromium on a seeded chat of 200 messages (a side
 * branch a third of the way in, so the graph has folded runs and two versions of a reply): where
 * the focus lands after an action (never on the page itself, so the arrow keys keep working),
 * Escape on the ⋯ menus, how far Rename… is, the version badges' size at Fit View, the pane
 * sliders' values, and what the no-model notice names.
 */

/** Whether the focus is on the page itself (nothing focused): the keys then do nothing useful. */
function focusOnPage(page: Page): Promise<boolean> {
  return page.evaluate(
    () => document.activeElement === null || document.activeElement === document.body,
  );
}

/** The accessible name of the graph node holding the focus, or '' when it is not on a node. */
function focusedNode(page: Page): Promise<string> {
  return page.evaluate(
    () => document.activeElement?.closest('.react-flow__node')?.getAttribute('aria-label') ?? '',
  );
}

/** Asserts the focus is on a graph node and that ArrowUp or ArrowDown moves it to another. */
async function arrowsMoveFromNode(page: Page, key: 'ArrowUp' | 'ArrowDown'): Promise<void> {
  const from = await focusedNode(page);
  expect(from).not.toBe('');
  await page.keyboard.press(key);
  await expect.poll(() => focusedNode(page)).not.toBe(from);
  expect(await focusedNode(page)).not.toBe('');
}

describe.skipIf(!chromiumInstalled())('focus, menus and legibility (issue #37)', () => {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-focus-'));
  let browser: BrowserContext;
  let running: RunningPlayground;
  let page: Page;
  let chatId: string;

  beforeAll(async () => {
    const path = join(directory, 'focus.db');
    ({ chatId } = await seedLongChat({ kind: 'sqlite', path }, 200));
    await buildClient(join(directory, 'client'));
    browser = await launchBrowser({ width: 1440, height: 900 });
    running = await startPlayground(
      {
        port: 0,
        host: '127.0.0.1',
        store: { kind: 'sqlite', path },
        model: null,
        defaultUserId: 'demo-user',
      },
      { clientDirectory: join(directory, 'client') },
    );
  });

  afterAll(async () => {
    await browser?.close();
    await running?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  /** A fresh page on the seeded chat, its graph drawn. */
  const open = async () => {
    page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${running.url}#/chat/${chatId}`);
    await page.locator('.react-flow__node.current-head').waitFor();
  };
  const inspectorText = () =>
    page
      .getByRole('complementary', { name: 'Selected message' })
      .getByTestId('selected-message-text')
      .textContent();

  it('keeps the focus on the new fragment after Add to context', async () => {
    await open();
    await page.getByRole('combobox', { name: 'Add fragment' }).focus();
    await page.keyboard.press('ArrowDown');
    await page.getByRole('region', { name: 'Fragment editor' }).waitFor();
    await tabTo(page, 'Role Text');
    await page.keyboard.type('You answer briefly.');
    await tabTo(page, 'Add to context');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('region', { name: 'Fragment editor' }).count()).toBe(0);
    await expect.poll(() => focusedName(page)).toBe('Edit: Role 1');
  });

  it('Escape closes the ⋯ menu and gives the focus back to its button', async () => {
    const menu = page.locator('details.menu', { has: page.getByLabel('Context menu') });
    await page.getByLabel('Context menu').focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => menu.evaluate((element) => element.hasAttribute('open'))).toBe(true);
    // From one of its items, too: Tab into the menu, then Escape.
    await page.keyboard.press('Tab');
    expect(await focusedName(page)).toBe('Load JSON…');
    await page.keyboard.press('Escape');
    await expect.poll(() => menu.evaluate((element) => element.hasAttribute('open'))).toBe(false);
    expect(await focusedName(page)).toBe('Context menu');
    // The checkpoints menu of the graph is the same kind of menu.
    const checkpoints = page.locator('details.menu', { has: page.getByLabel('Checkpoints') });
    await page.getByLabel('Checkpoints').focus();
    await page.keyboard.press('Enter');
    await expect
      .poll(() => checkpoints.evaluate((element) => element.hasAttribute('open')))
      .toBe(true);
    await page.keyboard.press('Escape');
    await expect
      .poll(() => checkpoints.evaluate((element) => element.hasAttribute('open')))
      .toBe(false);
    expect(await focusedName(page)).toBe('Checkpoints');
  });

  it('gives the focus back to the ⋯ menu when what it opened closes', async () => {
    const chooseFromMenu = async (item: string) => {
      await page.getByLabel('Context menu').focus();
      await page.keyboard.press('Enter');
      await tabTo(page, item);
      await page.keyboard.press('Enter');
    };
    // Load JSON…, then Cancel.
    await chooseFromMenu('Load JSON…');
    await page.getByRole('region', { name: 'Load context JSON' }).waitFor();
    await tabTo(page, 'Cancel');
    await page.keyboard.press('Enter');
    await expect.poll(() => focusedName(page)).toBe('Context menu');
    // Remove all, asked first: Cancel, then again and confirm; Undo takes the focus, then the
    // menu again once the fragments are back.
    await chooseFromMenu('Remove all');
    const confirm = page.getByRole('alertdialog', { name: 'Confirm removal' });
    await confirm.waitFor();
    // The question takes the focus on its safe answer (never left on the hidden menu item,
    // whose name is the same as the confirming button's).
    await expect.poll(() => focusedName(page)).toBe('Cancel');
    await page.keyboard.press('Enter');
    await expect.poll(() => focusedName(page)).toBe('Context menu');
    await chooseFromMenu('Remove all');
    await confirm.waitFor();
    await expect.poll(() => focusedName(page)).toBe('Cancel');
    await tabTo(page, 'Remove all', { back: true });
    await page.keyboard.press('Enter');
    await expect.poll(() => focusedName(page)).toBe('Undo');
    await page.keyboard.press('Enter');
    await expect.poll(() => focusedName(page)).toBe('Context menu');
    await expect
      .poll(() => page.getByRole('region', { name: 'Context' }).textContent())
      .toContain('You answer briefly.');
  });

  it('moves the focus to the message a search hit picks, and the arrow keys go on from it', async () => {
    await page.locator('.react-flow__node.current-head').focus();
    await page.keyboard.press('/');
    expect(await focusedName(page)).toBe('Search messages');
    await page.keyboard.type('case 150');
    const results = page.getByRole('region', { name: 'Search results' });
    await expect.poll(() => results.locator('.search-hit').count()).toBeGreaterThan(0);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await expect.poll(inspectorText).toBe('Question 150: what about case 150?');
    await expect.poll(() => focusedNode(page)).toContain('Question 150');
    // Down: the folded run below the picked message (or its reply).
    await arrowsMoveFromNode(page, 'ArrowDown');
  });

  it('moves the focus into an unfolded run after Enter on it', async () => {
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Fit view' }).click();
    const run = page.locator('.react-flow__node.run').first();
    await run.focus();
    const runName = await focusedNode(page);
    expect(runName).toMatch(/^Folded run of/);
    await page.keyboard.press('Enter');
    await expect.poll(() => focusOnPage(page)).toBe(false);
    await expect.poll(() => focusedNode(page)).toMatch(/^Message \d+/);
    await arrowsMoveFromNode(page, 'ArrowDown');
  });

  it('keeps the focus on the message after Branch from here', async () => {
    await open();
    await page.locator('.react-flow__node.current-head').focus();
    await page.keyboard.press('ArrowUp');
    await expect.poll(() => focusedNode(page)).toMatch(/^Message \d+, user: Question 198/);
    await page.keyboard.press('Enter');
    await expect.poll(inspectorText).toBe('Question 198: what about case 198?');
    await tabTo(page, 'Branch from here');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.branch-pill').textContent()).toContain('main-');
    await expect
      .poll(() => focusedNode(page))
      .toMatch(/^Message \d+, user; current message.*: Question 198/);
    await arrowsMoveFromNode(page, 'ArrowUp');
  });

  it('opens Rename… with one key (F2) instead of a long walk with Tab', async () => {
    await open();
    const rename = page.getByRole('button', { name: 'Rename…' });
    expect(await rename.getAttribute('aria-keyshortcuts')).toBe('F2');
    // The walk a keyboard user had: from the top of the page to Rename… with Tab alone.
    const presses = await tabTo(page, 'Rename…');
    console.log(`[playground] Rename…: ${presses} Tab presses from the top of the page, or F2`);
    await page.locator('.react-flow__node.current-head').focus();
    await page.keyboard.press('F2');
    const dialog = page.getByRole('dialog', { name: /Rename/ });
    await dialog.waitFor();
    expect(await focusedName(page)).toMatch(/name/i);
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
    // The focus goes back to where F2 was pressed.
    expect(await focusedNode(page)).toMatch(/current message/);
  });

  it('keeps the version badges legible at Fit View', async () => {
    await page.getByRole('button', { name: 'Fit view' }).click();
    const zoom = () =>
      page.evaluate(() => {
        const viewport = document.querySelector<HTMLElement>('.react-flow__viewport');
        return new DOMMatrix(viewport ? getComputedStyle(viewport).transform : 'none').a;
      });
    await expect.poll(zoom).toBeLessThan(0.5);
    const badges = await page.evaluate(() =>
      [...document.querySelectorAll<HTMLElement>('[data-testid="version-badge"]')]
        .filter((element) => element.checkVisibility({ visibilityProperty: true }))
        .map((element) => ({
          text: element.textContent ?? '',
          height: element.getBoundingClientRect().height,
          fontSize:
            Number.parseFloat(getComputedStyle(element).fontSize) *
            (element.getBoundingClientRect().height / element.offsetHeight),
        })),
    );
    // The side branch a third of the way in gives the reply there two versions.
    expect(badges.length).toBeGreaterThan(0);
    for (const badge of badges) expect(badge.fontSize, badge.text).toBeGreaterThanOrEqual(9);
  });

  it('reports the pane sliders with clean values', async () => {
    const separators = await page.getByRole('separator').evaluateAll((elements) =>
      elements.map((element) => ({
        name: element.getAttribute('aria-label'),
        values: ['aria-valuemin', 'aria-valuemax', 'aria-valuenow'].map(
          (name) => element.getAttribute(name) ?? '',
        ),
      })),
    );
    expect(separators.map((separator) => separator.name)).toContain('Resize the graph');
    for (const { name, values } of separators)
      for (const value of values) expect(value, `${name}: ${value}`).toMatch(/^\d+$/);
    const graph = page.getByRole('separator', { name: 'Resize the graph' });
    expect(await graph.getAttribute('aria-valuemin')).toBe('10');
    expect(await graph.getAttribute('aria-valuemax')).toBe('80');
    // Moved with the keys, it stays a whole percentage.
    await graph.focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('End');
    expect(await graph.getAttribute('aria-valuenow')).toBe('80');
    await page.keyboard.press('Home');
    expect(await graph.getAttribute('aria-valuenow')).toBe('10');
    expect(await graph.getAttribute('aria-valuetext')).toBe('conversation 10%, graph 90%');
  });

  it('reads the graph share an older page kept as a whole percentage', async () => {
    const older = await browser.newPage();
    await older.addInitScript(() =>
      localStorage.setItem('ctxgraph-playground-layout', JSON.stringify({ graphShare: 0.7 })),
    );
    await older.goto(`${running.url}#/chat/${chatId}`);
    const graph = older.getByRole('separator', { name: 'Resize the graph' });
    await graph.waitFor();
    expect(await graph.getAttribute('aria-valuenow')).toBe('30');
    expect(await graph.getAttribute('aria-valuetext')).toBe('conversation 30%, graph 70%');
    await older.close();
  });

  it('names every way to get a model in the no-model notice', async () => {
    const notice = await page.getByTestId('no-model-notice').textContent();
    // Shown whole, not cut off at the pane's edge.
    const clipped = await page
      .getByTestId('no-model-notice')
      .locator('> span')
      .evaluate((element) => element.scrollWidth > element.clientWidth);
    expect(clipped).toBe(false);
    for (const setting of [
      'PLAYGROUND_MODEL=echo',
      'OPENAI_API_KEY',
      'OPENAI_BASE_URL',
      'OPENAI_MODEL',
    ])
      expect(notice).toContain(setting);
  });
});
