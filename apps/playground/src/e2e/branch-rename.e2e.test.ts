import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BrowserPlayground,
  chromiumInstalled,
  startBrowserPlayground,
} from './browser-harness';

/*
 * Issue #28: a branch can be renamed from the graph toolbar with the keyboard alone (errors in
 * plain words, none before anything is typed), and search as you type matches the word being
 * typed as a prefix ("fib" finds "fibonacci"). Real Chromium, a real SQLite file, the real server.
 */

interface View {
  chat: { id: string };
  branch: string;
  graph: { nodes: Array<{ id: string; text: string }>; branches: Array<{ name: string }> };
}

describe.skipIf(!chromiumInstalled())('renaming a branch and prefix search, in a browser', () => {
  let playground: BrowserPlayground;
  let page: Page;
  let chatId = '';
  const call = <T>(method: string, path: string, body?: unknown): Promise<T> =>
    playground.call<T>(method, path, body);

  beforeAll(async () => {
    playground = await startBrowserPlayground('rename', 'rename-user');
    const chat = await call<View>('POST', '/api/chats', { title: 'Rename chat' });
    chatId = chat.chat.id;
    const say = async (role: 'user' | 'assistant', text: string) => {
      await call('POST', `/api/chats/${chatId}/messages`, { role, text });
      return call<View>('GET', `/api/chats/${chatId}`);
    };
    const asked = await say('user', 'What is a fibonacci number?');
    await say('assistant', 'Each is the sum of the two before it.');
    const question = asked.graph.nodes.find((node) => node.text.startsWith('What is'));
    if (question === undefined) throw new Error('the seeded question is missing');
    await call('POST', `/api/chats/${chatId}/rewind`, { messageId: question.id });
    await say('assistant', 'A number of the sequence 0, 1, 1, 2, 3, 5…');
    page = await playground.openChat(chatId);
  });

  afterAll(async () => {
    await playground?.close();
  });

  it('finds "fibonacci" while "fib" is typed', async () => {
    await page.locator('.chat-list').click();
    await page.keyboard.press('/');
    const started = performance.now();
    await page.keyboard.type('fib');
    const results = page.getByRole('region', { name: 'Search results' });
    await expect
      .poll(() => results.getByTestId('search-count').textContent())
      .toBe('1 message found on this branch.');
    console.log(
      `[playground] prefix search "fib" answered in ${Math.round(performance.now() - started)} ms (debounce included)`,
    );
    expect(await results.locator('.search-hit').first().textContent()).toContain('fibonacci');
    await page.keyboard.press('Escape');
    await expect.poll(() => results.count()).toBe(0);
  });

  it('renames the branch you are on with the keyboard alone; problems in plain words', async () => {
    const rename = page.getByRole('button', { name: 'Rename…' });
    await rename.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Rename a branch' });
    await dialog.waitFor();
    const field = dialog.getByRole('textbox', { name: 'New branch name' });
    // The name field has the focus, holding the current name; no error before anything is typed.
    await expect
      .poll(() => field.evaluate((element) => element === document.activeElement))
      .toBe(true);
    expect(await field.inputValue()).toBe('main-v2');
    expect(await dialog.locator('#rename-branch-problem').textContent()).toBe('');
    // A taken name is explained, and nothing is sent.
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('main');
    await expect
      .poll(() => dialog.locator('#rename-branch-problem').textContent())
      .toBe('There is already a branch called “main” in this chat. Pick another name.');
    await page.keyboard.press('Enter');
    expect(await dialog.count()).toBe(1);
    // A free name renames on Enter; the dialog closes and the toolbar shows the new name.
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('sequence answer');
    await page.keyboard.press('Enter');
    await expect.poll(() => dialog.count()).toBe(0);
    const select = page.getByRole('combobox', { name: 'Switch branch' });
    await expect.poll(() => select.inputValue()).toBe('sequence answer');
    const view = await call<View>('GET', `/api/chats/${chatId}`);
    expect(view.branch).toBe('sequence answer');
    expect(view.graph.branches.map((branch) => branch.name)).toEqual(['main', 'sequence answer']);
    // Escape closes the dialog without renaming.
    await rename.focus();
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => dialog.count()).toBe(0);
  });
});
