import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BrowserPlayground,
  chromiumInstalled,
  startBrowserPlayground,
} from './browser-harness';
import { arrowTo, focusedName, tabTo } from './keyboard-helpers';

/*
 * Every task of the playground README with the keyboard alone (issue #28): no click, no
 * locator.focus() or fill(); the page is only read. Tab and Shift+Tab reach each control, Enter,
 * Space, the arrow keys, `/` and Escape do the rest. Real Chromium, a real SQLite file, the real
 * server (no model: the replies are written by hand, as the README says).
 */

describe.skipIf(!chromiumInstalled())('the playground with the keyboard alone', () => {
  let playground: BrowserPlayground;
  let page: Page;

  beforeAll(async () => {
    playground = await startBrowserPlayground('keyboard', 'keyboard-user');
    page = await playground.browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(playground.running.url);
    await page.getByRole('region', { name: 'Chats' }).waitFor();
  });

  afterAll(async () => {
    await playground?.close();
  });

  const inspector = () => page.getByRole('complementary', { name: 'Selected message' });
  const inspectorText = () => inspector().getByTestId('selected-message-text').textContent();
  const branchPill = () => page.locator('.branch-pill').textContent();
  const conversation = () => page.locator('.messages .message').allTextContents();

  it('creates a chat and writes a conversation', async () => {
    const started = performance.now();
    await tabTo(page, 'New chat title');
    await page.keyboard.type('Keyboard only');
    await page.keyboard.press('Enter');
    await page.getByRole('region', { name: 'Conversation' }).waitFor();
    await expect
      .poll(() => page.locator('.chat-list li.selected').textContent())
      .toContain('Keyboard only');

    // A message, and the reply written by hand (no model), each sent with Ctrl+Enter.
    const exchange = async (question: string, answer: string) => {
      await tabTo(page, 'User message');
      await page.keyboard.type(question);
      await page.keyboard.press('Control+Enter');
      await expect.poll(conversation).toContainEqual(expect.stringContaining(question));
      await tabTo(page, 'Assistant reply');
      await page.keyboard.type(answer);
      await page.keyboard.press('Control+Enter');
      await expect.poll(conversation).toContainEqual(expect.stringContaining(answer));
    };
    await exchange('What is a fibonacci number?', 'Each is the sum of the two before it.');
    await exchange('Show the first ten.', '0 1 1 2 3 5 8 13 21 34');
    console.log(
      `[playground] keyboard: chat created and two exchanges written in ${Math.round(performance.now() - started)} ms`,
    );
  });

  it('adds a context fragment', async () => {
    await tabTo(page, 'Add fragment');
    // A closed <select> takes the arrow keys: the next entry is picked at once.
    await page.keyboard.press('ArrowDown');
    const editor = page.getByRole('region', { name: 'Fragment editor' });
    await editor.waitFor();
    await tabTo(page, 'Role Text');
    await page.keyboard.type('You answer in short sentences.');
    await tabTo(page, 'Add to context');
    await page.keyboard.press('Enter');
    await expect.poll(() => editor.count()).toBe(0);
    await expect
      .poll(() => page.getByRole('region', { name: 'Context' }).textContent())
      .toContain('You answer in short sentences.');
  });

  it('opens a node with Enter, moves along the chain, branches from it and makes a version', async () => {
    await tabTo(page, /^Message \d+, assistant; current message; head of main: 0 1 1 2/);
    await page.keyboard.press('Enter');
    await expect.poll(inspectorText).toBe('0 1 1 2 3 5 8 13 21 34');
    // Up twice: the question, then the first answer; Enter opens it.
    await page.keyboard.press('ArrowUp');
    await page.keyboard.press('ArrowUp');
    await expect.poll(() => focusedName(page)).toContain('Each is the sum');
    await page.keyboard.press('Enter');
    await expect.poll(inspectorText).toBe('Each is the sum of the two before it.');
    // Branch from here (the engine's rewind), then a new question: a second version of it.
    await tabTo(page, 'Branch from here');
    await page.keyboard.press('Enter');
    await expect.poll(branchPill).toContain('main-');
    await tabTo(page, 'User message');
    await page.keyboard.type('And in Python?');
    await page.keyboard.press('Control+Enter');
    await expect.poll(conversation).toContainEqual(expect.stringContaining('And in Python?'));
    await expect.poll(() => page.getByTestId('version-badge').count()).toBeGreaterThan(0);
  });

  it('switches between versions, and continues the other one', async () => {
    // The graph's tab stop is the message last opened; Down walks to the new current one.
    await arrowTo(page, 'ArrowDown', /current message; version 2 of 2/);
    await page.keyboard.press('Enter');
    await expect.poll(inspectorText).toBe('And in Python?');
    await tabTo(page, 'Previous version');
    await page.keyboard.press('Enter');
    await expect.poll(inspectorText).toBe('Show the first ten.');
    await expect
      .poll(() => inspector().getByTestId('version-position').textContent())
      .toBe('Version 1 of 2');
    await tabTo(page, 'Continue this version');
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await branchPill())?.trim()).toMatch(/main$/);
    await expect.poll(conversation).toContainEqual(expect.stringContaining('0 1 1 2 3'));
  });

  it('checkpoints a message and restores it', async () => {
    await arrowTo(page, 'ArrowDown', /current message; head of main/);
    await page.keyboard.press('Enter');
    await inspector().waitFor();
    await tabTo(page, 'Checkpoint name');
    await page.keyboard.type('ten-numbers');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.locator('.tag.checkpoint').allTextContents())
      .toContainEqual(expect.stringContaining('ten-numbers'));
    await page.keyboard.press('Escape');
    await expect.poll(() => inspector().count()).toBe(0);
    // The checkpoints menu: a <summary> opens with Enter; Restore puts it on a new branch.
    await tabTo(page, 'Checkpoints');
    await page.keyboard.press('Enter');
    await tabTo(page, 'Restore ten-numbers');
    await page.keyboard.press('Enter');
    await expect.poll(branchPill).not.toMatch(/main$/);
  });

  it('searches with /, picks a hit with the arrow keys, closes with Escape', async () => {
    // `/` works anywhere but a text field: leave the field first.
    await tabTo(page, 'Inspect');
    await page.keyboard.press('/');
    expect(await focusedName(page)).toBe('Search messages');
    await page.keyboard.type('fib');
    const results = page.getByRole('region', { name: 'Search results' });
    await expect.poll(() => results.locator('.search-hit').count()).toBeGreaterThan(0);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await expect.poll(inspectorText).toBe('What is a fibonacci number?');
    await expect.poll(() => results.count()).toBe(0);
    await page.keyboard.press('Escape');
    await expect.poll(() => inspector().count()).toBe(0);
  });

  it('switches, renames, compares and deletes branches, and starts a side branch', async () => {
    await tabTo(page, 'Switch branch');
    const before = await branchPill();
    await page.keyboard.press('ArrowUp');
    await expect.poll(branchPill).not.toBe(before);

    await tabTo(page, 'Rename…');
    await page.keyboard.press('Enter');
    const rename = page.getByRole('dialog', { name: /Rename/ });
    await rename.waitFor();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('keyboard-branch');
    await page.keyboard.press('Enter');
    await expect.poll(() => rename.count()).toBe(0);
    await expect.poll(branchPill).toContain('keyboard-branch');

    await tabTo(page, 'Side branch');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.notice-bar').textContent()).toContain('Side branch');

    await tabTo(page, 'Compare…');
    await page.keyboard.press('Enter');
    const compare = page.getByRole('dialog', { name: /Compare/ });
    await compare.waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => compare.count()).toBe(0);

    await tabTo(page, 'Delete…');
    await page.keyboard.press('Enter');
    const remove = page.getByRole('dialog', { name: /Delete/ });
    await remove.waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => remove.count()).toBe(0);
  });

  it('opens the budget, cache and inspect views, and closes each with Escape', async () => {
    await tabTo(page, 'Budget & cache');
    await page.keyboard.press('Enter');
    const budget = page.getByRole('dialog', { name: 'Budget and cache' });
    await budget.waitFor();
    // The panel takes the focus when it opens, so Escape closes it at once; the focus goes back
    // to the button that opened it.
    await page.keyboard.press('Escape');
    await expect.poll(() => budget.count()).toBe(0);
    expect(await focusedName(page)).toBe('Budget & cache');
    await page.keyboard.press('Enter');
    await budget.waitFor();
    await tabTo(page, 'Token budget');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('60');
    await page.keyboard.press('Enter');
    await tabTo(page, 'Cache');
    await page.keyboard.press('Enter');
    await tabTo(page, 'Record a call now');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => budget.getByRole('list', { name: 'Recorded calls' }).locator('> li').count())
      .toBeGreaterThan(0);
    await expect.poll(() => budget.textContent()).toContain('60');
    await page.keyboard.press('Escape');
    await expect.poll(() => budget.count()).toBe(0);

    await tabTo(page, 'Inspect');
    await page.keyboard.press('Enter');
    const inspect = page.getByRole('dialog', { name: /Inspect/ });
    await inspect.waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => inspect.count()).toBe(0);
    expect(await focusedName(page)).toBe('Inspect');

    await tabTo(page, 'Compact…');
    await page.keyboard.press('Enter');
    const compact = page.getByRole('dialog', { name: /Compact/ });
    await compact.waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => compact.count()).toBe(0);
  });

  it('switches the theme and folds a pane', async () => {
    await tabTo(page, 'Use the dark theme');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await tabTo(page, 'Context');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('region', { name: 'Context' }).count()).toBe(0);
    await page.keyboard.press('Enter');
    await page.getByRole('region', { name: 'Context' }).waitFor();
  });

  it('renames, opens and deletes chats with the in-page confirm', async () => {
    await tabTo(page, 'New chat title');
    await page.keyboard.type('Throwaway');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.locator('.chat-list li.selected').textContent())
      .toContain('Throwaway');
    // Open the first chat again from the list.
    await tabTo(page, /^Keyboard only/);
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.locator('.chat-list li.selected').textContent())
      .toContain('Keyboard only');
    await tabTo(page, 'Rename Keyboard only');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Fibonacci, by keyboard');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.locator('.chat-list').textContent())
      .toContain('Fibonacci, by keyboard');
    // Delete the other chat: open it, then its delete button asks in the page.
    await tabTo(page, /^Throwaway/);
    await page.keyboard.press('Enter');
    await tabTo(page, 'Delete Throwaway');
    await page.keyboard.press('Enter');
    const confirm = page.getByRole('alertdialog', { name: 'Confirm chat deletion' });
    await confirm.waitFor();
    expect(await focusedName(page)).toBe('Keep');
    await page.keyboard.press('Shift+Tab');
    expect(await focusedName(page)).toBe('Delete');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('.chat-list').textContent()).not.toContain('Throwaway');
  });
});
