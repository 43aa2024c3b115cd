import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BrowserPlayground,
  chromiumInstalled,
  startBrowserPlayground,
} from './browser-harness';

/*
 * The playground as a devtool (issue #28): panes that resize and fold so the graph can take the
 * screen, the inspector beside the graph (never over it), a dark theme, the graph and the search
 * used with the keyboard alone, and accessible names on every control. Real Chromium, a real
 * SQLite file, the real server.
 */

interface View {
  chat: { id: string };
  graph: { nodes: Array<{ id: string; text: string }> };
}

/** Whether two boxes overlap (share any area). */
function overlaps(
  a: { x: number; y: number; width: number; height: number },
  b: { x: number; y: number; width: number; height: number },
): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/** The accessible name (aria-label, its label, its text or its title) of the focused element. */
function focusedName(page: Page): Promise<string> {
  return page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    if (element === null) return '';
    return (
      element.getAttribute('aria-label') ??
      (element as HTMLInputElement).labels?.[0]?.textContent ??
      element.textContent ??
      ''
    ).trim();
  });
}

describe.skipIf(!chromiumInstalled())('the playground as a devtool, in a browser', () => {
  let playground: BrowserPlayground;
  let page: Page;
  let chatId = '';
  const call = <T>(method: string, path: string, body?: unknown): Promise<T> =>
    playground.call<T>(method, path, body);

  beforeAll(async () => {
    playground = await startBrowserPlayground('devtool', 'devtool-user');
    const chat = await call<View>('POST', '/api/chats', { title: 'Keyboard chat' });
    chatId = chat.chat.id;
    const say = async (role: 'user' | 'assistant', text: string) => {
      await call('POST', `/api/chats/${chatId}/messages`, { role, text });
      return call<View>('GET', `/api/chats/${chatId}`);
    };
    await say('user', 'What is a fibonacci number?');
    await say('assistant', 'Each is the sum of the two before it.');
    const view = await say('user', 'Show the first ten.');
    await say('assistant', '0 1 1 2 3 5 8 13 21 34');
    // A second branch from the first answer: the graph forks there.
    const answer = view.graph.nodes.find((node) => node.text.startsWith('Each is'));
    if (answer === undefined) throw new Error('the seeded answer is missing');
    await call('POST', `/api/chats/${chatId}/rewind`, { messageId: answer.id });
    await say('user', 'And in Python?');
    page = await playground.openChat(chatId);
  });

  afterAll(async () => {
    await playground?.close();
  });

  it('opens a graph node with Enter, moves along the chain with the arrow keys, closes with Escape', async () => {
    // The graph has one tab stop (the current message); edges are no tab stops at all.
    expect(await page.locator('.react-flow__edge[tabindex]').count()).toBe(0);
    expect(await page.locator('.react-flow__node[tabindex="0"]').count()).toBe(1);
    const head = page.locator('.react-flow__node.current-head');
    expect(await head.getAttribute('aria-label')).toMatch(
      /^Message \d+, user; current message; version 2 of 2; head of main-v2: And in Python\?$/,
    );
    await head.focus();
    const started = performance.now();
    await page.keyboard.press('Enter');
    const inspector = page.getByRole('complementary', { name: 'Selected message' });
    await inspector.waitFor();
    console.log(
      `[playground] inspector opened by keyboard in ${Math.round(performance.now() - started)} ms`,
    );
    expect(await inspector.getByTestId('selected-message-text').textContent()).toBe(
      'And in Python?',
    );

    // Up goes to the parent; Space opens it.
    await page.keyboard.press('ArrowUp');
    await expect.poll(() => focusedName(page)).toContain('Each is the sum of the two before it.');
    await page.keyboard.press(' ');
    await expect
      .poll(() => inspector.getByTestId('selected-message-text').textContent())
      .toBe('Each is the sum of the two before it.');
    expect(await inspector.getByTestId('branches-through').textContent()).toBe('main, main-v2');

    // Down follows the active branch; Left/Right move between the fork's children.
    await page.keyboard.press('ArrowDown');
    await expect.poll(() => focusedName(page)).toContain('And in Python?');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowRight');
    const siblings = [await focusedName(page)];
    await page.keyboard.press('ArrowLeft');
    siblings.push(await focusedName(page));
    expect(siblings.some((name) => name.includes('Show the first ten.'))).toBe(true);

    // Escape closes the inspector and leaves the focus on a graph node.
    await page.keyboard.press('Escape');
    await expect.poll(() => inspector.count()).toBe(0);
    await expect
      .poll(() =>
        page.evaluate(() => document.activeElement?.classList.contains('react-flow__node')),
      )
      .toBe(true);
  });

  it('puts the inspector beside the graph, never over it', async () => {
    await page.locator('.react-flow__node', { hasText: 'Show the first ten.' }).click();
    const inspector = page.getByRole('complementary', { name: 'Selected message' });
    await inspector.waitFor();
    const canvas = await page.getByTestId('graph-canvas').boundingBox();
    const box = await inspector.boundingBox();
    expect(canvas).not.toBeNull();
    expect(box).not.toBeNull();
    if (canvas && box) expect(overlaps(canvas, box)).toBe(false);
    // The zoom controls stay in the canvas, uncovered.
    const controls = await page.locator('.react-flow__controls').boundingBox();
    if (controls && box) expect(overlaps(controls, box)).toBe(false);
    // The selected message is inside the canvas (centred again once the inspector took room).
    const selected = await page.locator('.react-flow__node.selected-node').boundingBox();
    if (selected && canvas) {
      expect(selected.x).toBeGreaterThanOrEqual(canvas.x);
      expect(selected.x + selected.width).toBeLessThanOrEqual(canvas.x + canvas.width);
    }
    await inspector.getByRole('button', { name: 'Close the inspector' }).click();
    await expect.poll(() => inspector.count()).toBe(0);
  });

  it('focuses the search with /, searches as you type, closes on Escape and on a click outside', async () => {
    await page.locator('.chat-list').click();
    await page.keyboard.press('/');
    expect(await focusedName(page)).toBe('Search messages');
    const started = performance.now();
    await page.keyboard.type('fibonacci');
    const results = page.getByRole('region', { name: 'Search results' });
    await expect
      .poll(() => results.getByTestId('search-count').textContent())
      .toBe('1 message found on this branch.');
    console.log(
      `[playground] search as you type answered in ${Math.round(performance.now() - started)} ms (debounce included)`,
    );
    // Escape closes the popover; the text stays, and typing again opens it.
    await page.keyboard.press('Escape');
    await expect.poll(() => results.count()).toBe(0);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.type(' number');
    await results.waitFor();
    // A click outside closes it, and then the toolbar under it is clickable.
    await page.locator('.conversation-panel .messages').click();
    await expect.poll(() => results.count()).toBe(0);
    // Enter in the box jumps to the first hit (keyboard only).
    await page.keyboard.press('/');
    await results.waitFor();
    await expect.poll(() => results.locator('.search-hit').count()).toBe(1);
    await page.keyboard.press('Enter');
    const inspector = page.getByRole('complementary', { name: 'Selected message' });
    await expect
      .poll(() => inspector.getByTestId('selected-message-text').textContent())
      .toBe('What is a fibonacci number?');
    await page.locator('.react-flow__pane').click();
    await page.keyboard.press('Escape');
    await expect.poll(() => inspector.count()).toBe(0);
  });

  it('keeps the results closed when a search answers after Escape or a click outside', async () => {
    const results = page.getByRole('region', { name: 'Search results' });
    const box = page.getByLabel('Search messages');
    // Each search answer is held until the test lets it through, so it arrives after the dismissal.
    const held: (() => void)[] = [];
    let searches = 0;
    await page.route('**/api/chats/*/search*', async (route) => {
      searches += 1;
      await new Promise<void>((release) => held.push(release));
      await route.continue();
    });
    try {
      for (const dismiss of ['Escape', 'click outside'] as const) {
        const before = searches;
        await box.fill('');
        await box.fill(dismiss === 'Escape' ? 'fibonacci' : 'fibonacci number');
        await expect.poll(() => searches).toBeGreaterThan(before);
        if (dismiss === 'Escape') await page.keyboard.press('Escape');
        else await page.locator('.conversation-panel .messages').click();
        const answered = page.waitForResponse((response) => response.url().includes('/search'));
        for (const release of held.splice(0)) release();
        // The answer reached the page: once it is read and two frames are drawn, a popover it
        // reopened would be in the DOM.
        await (await answered).finished();
        await page.evaluate(
          () =>
            new Promise<void>((done) =>
              requestAnimationFrame(() => requestAnimationFrame(() => done())),
            ),
        );
        expect(await results.count()).toBe(0);
      }
      // Typing again opens it with the newest answer.
      await box.focus();
      await page.keyboard.type(' x');
      await expect
        .poll(async () => {
          for (const release of held.splice(0)) release();
          return results.count();
        })
        .toBeGreaterThan(0);
    } finally {
      for (const release of held.splice(0)) release();
      await page.unroute('**/api/chats/*/search*');
      await box.fill('');
      await page.keyboard.press('Escape');
    }
  });

  it('pages through many hits, saying how many are shown', async () => {
    for (let index = 0; index < 24; index += 1) {
      await call('POST', `/api/chats/${chatId}/messages`, {
        role: index % 2 === 0 ? 'user' : 'assistant',
        text: `Paging note ${index}`,
      });
    }
    await page.reload();
    await page.locator('.react-flow__node.current-head').waitFor();
    await page.getByLabel('Search messages').fill('paging');
    const results = page.getByRole('region', { name: 'Search results' });
    await expect
      .poll(() => results.getByTestId('search-count').textContent())
      .toBe('20 messages found on this branch, more to load.');
    await results.getByRole('button', { name: 'Load more results' }).click();
    await expect
      .poll(() => results.getByTestId('search-count').textContent())
      .toBe('24 messages found on this branch.');
    expect(await results.locator('.search-hit').count()).toBe(24);
    await page.keyboard.press('Escape');
  });

  it('gives the graph the whole page, resizes panes from the keyboard, and keeps the layout over a reload', async () => {
    const canvas = page.getByTestId('graph-canvas');
    const before = await canvas.boundingBox();
    await page.getByRole('button', { name: 'Graph only' }).click();
    await expect
      .poll(async () => (await canvas.boundingBox())?.width ?? 0)
      .toBeGreaterThan(1440 * 0.85);
    const after = await canvas.boundingBox();
    expect(after?.height ?? 0).toBeGreaterThan(900 * 0.7);
    expect((after?.height ?? 0) * (after?.width ?? 0)).toBeGreaterThan(
      3 * (before?.height ?? 0) * (before?.width ?? 0),
    );
    expect(await page.getByRole('region', { name: 'Conversation' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Graph only' }).click();
    await page.getByRole('region', { name: 'Conversation' }).waitFor();

    // A splitter is a separator with a value: the arrow keys resize the chat list.
    const splitter = page.getByRole('separator', { name: 'Resize the chat list' });
    const width = async () => (await page.locator('.chats-column').boundingBox())?.width ?? 0;
    const start = await width();
    await splitter.focus();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await expect.poll(width).toBeCloseTo(start + 40, 0);
    expect(await splitter.getAttribute('aria-valuenow')).toBe(String(Math.round(start + 40)));
    // The graph's splitter too (its value is the conversation's share).
    const graphBefore = (await canvas.boundingBox())?.height ?? 0;
    await page.getByRole('separator', { name: 'Resize the graph' }).focus();
    await page.keyboard.press('ArrowUp');
    await expect
      .poll(async () => (await canvas.boundingBox())?.height ?? 0)
      .toBeGreaterThan(graphBefore + 20);

    // Folding the context column is kept over a reload, as are the sizes.
    await page.getByRole('button', { name: 'Context', exact: true }).click();
    expect(await page.getByRole('region', { name: 'Context' }).count()).toBe(0);
    await page.reload();
    await page.locator('.react-flow__node.current-head').waitFor();
    expect(await page.getByRole('region', { name: 'Context' }).count()).toBe(0);
    expect(await width()).toBeCloseTo(start + 40, 0);
    await page.getByRole('button', { name: 'Context', exact: true }).click();
    await page.getByRole('region', { name: 'Context' }).waitFor();
  });

  it('switches to the dark theme and keeps it', async () => {
    const background = () =>
      page.evaluate(
        () => getComputedStyle(document.querySelector('.panel') as Element).backgroundColor,
      );
    const light = await background();
    await page.getByRole('button', { name: 'Use the dark theme' }).click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    const dark = await background();
    expect(dark).not.toBe(light);
    // Dark: each channel of the panels' colour is low.
    const channels = (dark.match(/\d+/g) ?? []).slice(0, 3).map(Number);
    expect(Math.max(...channels)).toBeLessThan(60);
    await page.reload();
    await page.locator('.react-flow__node.current-head').waitFor();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await page.getByRole('button', { name: 'Use the light theme' }).click();
    expect(await background()).toBe(light);
  });

  it('asks in the page, not in a browser dialog, before deleting a chat', async () => {
    let nativeDialogs = 0;
    page.on('dialog', (dialog) => {
      nativeDialogs += 1;
      void dialog.dismiss();
    });
    const doomed = await call<View>('POST', '/api/chats', { title: 'Throwaway' });
    await page.goto(`${playground.running.url}#/chat/${encodeURIComponent(doomed.chat.id)}`);
    await page.getByRole('region', { name: 'Context' }).waitFor();
    await page.getByRole('button', { name: 'Delete Throwaway' }).click();
    const confirm = page.getByRole('alertdialog', { name: 'Confirm chat deletion' });
    expect(await confirm.textContent()).toContain('Delete “Throwaway” and its whole graph?');
    // The safe answer has the focus; Escape is the same as Keep.
    expect(await focusedName(page)).toBe('Keep');
    await page.keyboard.press('Escape');
    await expect.poll(() => confirm.count()).toBe(0);
    await page.getByRole('button', { name: 'Delete Throwaway' }).click();
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await expect.poll(() => page.locator('.chat-list').textContent()).not.toContain('Throwaway');
    expect(nativeDialogs).toBe(0);
    await page.goto(`${playground.running.url}#/chat/${encodeURIComponent(chatId)}`);
    await page.locator('.react-flow__node.current-head').waitFor();
  });

  it('shows a notice over the page without pushing the panes down', async () => {
    const top = async () => (await page.locator('main.columns').boundingBox())?.y ?? -1;
    const before = await top();
    await page.getByRole('button', { name: 'Side branch' }).click();
    const notice = page.locator('.notice-bar');
    await expect.poll(() => notice.textContent()).toContain('Side branch');
    expect(await top()).toBe(before);
    // It sits at the foot of the window, clear of the top bar and the graph toolbar.
    const box = await notice.boundingBox();
    expect((box?.y ?? 0) + (box?.height ?? 0)).toBeGreaterThan(900 - 40);
    await notice.getByRole('button', { name: 'Dismiss' }).click();
    await expect.poll(() => notice.count()).toBe(0);
  });

  it('gives every control an accessible name', async () => {
    await page.locator('.react-flow__node.current-head').click();
    await page.getByRole('complementary', { name: 'Selected message' }).waitFor();
    const unnamed = await page.evaluate(() => {
      const controls = [
        ...document.querySelectorAll<HTMLElement>(
          'button, input, select, textarea, summary, [role="separator"], [tabindex]:not([tabindex="-1"])',
        ),
      ].filter((element) => element.checkVisibility());
      return controls
        .filter((element) => {
          // Named by aria-label, a <label>, or (a button) its text: never by a title alone.
          const label =
            element.getAttribute('aria-label') ||
            (element as HTMLInputElement).labels?.[0]?.textContent ||
            (element.tagName === 'BUTTON' || element.tagName === 'SUMMARY'
              ? element.textContent
              : '');
          return (label ?? '').trim() === '';
        })
        .map((element) => element.outerHTML.slice(0, 120));
    });
    expect(unnamed).toEqual([]);
    // No control is named after an internal id.
    const names = await page.evaluate(() =>
      [...document.querySelectorAll('[aria-label]')].map((element) =>
        element.getAttribute('aria-label'),
      ),
    );
    expect(names.filter((name) => /^Edge from /.test(name ?? ''))).toEqual([]);
    await page.keyboard.press('Escape');
  });

  it('switches between the versions of a message that has siblings', async () => {
    // Found with the search (it is folded among the paging notes): Enter selects it.
    await page.getByLabel('Search messages').fill('python');
    await expect.poll(() => page.locator('.search-hit').count()).toBe(1);
    await page.getByLabel('Search messages').press('Enter');
    const inspector = page.getByRole('complementary', { name: 'Selected message' });
    await expect
      .poll(() => inspector.getByTestId('selected-message-text').textContent())
      .toBe('And in Python?');
    await expect
      .poll(() => inspector.getByTestId('version-position').textContent())
      .toBe('Version 2 of 2');
    await expect.poll(() => inspector.textContent()).toContain('on your branch');
    await inspector.getByRole('button', { name: 'Previous version' }).click();
    await expect
      .poll(() => inspector.getByTestId('selected-message-text').textContent())
      .toBe('Show the first ten.');
    await expect
      .poll(() => inspector.getByTestId('version-position').textContent())
      .toBe('Version 1 of 2');
    await inspector.getByRole('button', { name: 'Continue this version' }).click();
    // The branch at that version's newest message is now the one you are on.
    // ('main-v2' contains 'main': wait for the switch itself, then for the conversation shown.)
    await expect
      .poll(async () => {
        const pill = (await page.locator('.branch-pill').textContent()) ?? '';
        return pill.includes('main') && !pill.includes('main-v2');
      })
      .toBe(true);
    await expect
      .poll(() => page.locator('.messages .message').last().textContent())
      .toContain('0 1 1 2 3 5 8 13 21 34');
  });
});
