import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningPlayground, startPlayground } from '../server/start-server';
import { buildClient, chromiumInstalled, launchBrowser } from './browser-harness';

/*
 * Issue #28, the views tell the truth: the budget window's calls are made with the budget it
 * shows, it leaves the message box usable (it says calls are recorded as messages are added), and
 * forms show no error before anything is typed. Real Chromium, a real SQLite file, the real server.
 */

interface View {
  chat: { id: string };
  messages: unknown[];
}

describe.skipIf(!chromiumInstalled())('the budget window and forms, in a browser', () => {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-views-'));
  const clientDirectory = join(directory, 'client');
  let browser: BrowserContext;
  let running: RunningPlayground;
  let page: Page;
  let chatId = '';

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(new URL(path, running.url), {
      method,
      headers: { 'content-type': 'application/json', 'x-ctxgraph-user': 'views-user' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status}`);
    return (await response.json()) as T;
  }

  beforeAll(async () => {
    await buildClient(clientDirectory);
    browser = await launchBrowser({ width: 1440, height: 900 });
    running = await startPlayground(
      {
        port: 0,
        host: '127.0.0.1',
        store: { kind: 'sqlite', path: join(directory, 'views.db') },
        model: null,
        defaultUserId: 'views-user',
      },
      { clientDirectory },
    );
    const chat = await call<View>('POST', '/api/chats', { title: 'Views chat' });
    chatId = chat.chat.id;
    await call('POST', `/api/chats/${chatId}/messages`, {
      role: 'user',
      text: 'How did the weekly figures move?',
    });
    await call('POST', `/api/chats/${chatId}/messages`, {
      role: 'assistant',
      text: 'They rose by three percent.',
    });
    page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${running.url}#/chat/${encodeURIComponent(chatId)}`);
    await page.locator('.react-flow__node.current-head').waitFor();
  });

  afterAll(async () => {
    await page?.close();
    await browser?.close();
    await running?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const dialog = () => page.getByRole('dialog', { name: 'Budget and cache' });
  const calls = () =>
    dialog().getByRole('list', { name: 'Recorded calls' }).locator('li.cache-turn');

  it('records the call made on opening with the budget the window shows', async () => {
    await page.getByRole('button', { name: 'Budget & cache' }).click();
    const budget = dialog().getByLabel('Token budget');
    expect(await budget.inputValue()).toBe('4000');
    await dialog().getByRole('button', { name: 'Cache' }).click();
    await expect.poll(() => calls().count()).toBe(1);
    expect(await calls().last().getByTestId('cache-call-budget').textContent()).toBe(
      'within 4,000 tokens',
    );
    // Another budget, then the window closes and opens again on the same message: the call made
    // on opening is made with the budget shown, not left as the earlier one.
    await budget.fill('3000');
    await budget.press('Enter');
    await dialog().getByRole('button', { name: 'Close' }).click();
    await expect.poll(() => dialog().count()).toBe(0);
    await page.getByRole('button', { name: 'Budget & cache' }).click();
    expect(await dialog().getByLabel('Token budget').inputValue()).toBe('3000');
    await dialog().getByRole('button', { name: 'Cache' }).click();
    await expect.poll(() => calls().count()).toBe(2);
    expect(await calls().last().getByTestId('cache-call-budget').textContent()).toBe(
      'within 3,000 tokens',
    );
    // Opening again with the same budget on the same message makes no second call.
    await dialog().getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'Budget & cache' }).click();
    await dialog().getByRole('button', { name: 'Cache' }).click();
    await calls().first().waitFor();
    expect(await calls().count()).toBe(2);
  });

  it('leaves the message box usable while it records a call per new message', async () => {
    expect(await dialog().count()).toBe(1);
    const box = page.getByRole('textbox', { name: 'User message' });
    // Nothing covers the message box: the point at its middle is the box itself.
    const covered = await box.evaluate((element) => {
      const rectangle = element.getBoundingClientRect();
      const hit = document.elementFromPoint(
        rectangle.left + rectangle.width / 2,
        rectangle.top + rectangle.height / 2,
      );
      return hit !== element;
    });
    expect(covered).toBe(false);
    const panel = await dialog().boundingBox();
    const field = await box.boundingBox();
    if (panel === null || field === null) throw new Error('the panel or the box is not shown');
    expect(panel.x >= field.x + field.width || panel.x + panel.width <= field.x).toBe(true);
    // The window says calls are recorded as messages are added, and they are.
    expect(await dialog().getByTestId('cache-view').textContent()).toContain(
      'a call is recorded at every new message',
    );
    const before = await calls().count();
    await box.click();
    await page.keyboard.type('And the monthly ones?');
    await page.keyboard.press('ControlOrMeta+Enter');
    await expect
      .poll(async () => (await call<View>('GET', `/api/chats/${chatId}`)).messages.length)
      .toBe(3);
    await expect.poll(() => calls().count()).toBe(before + 1);
    expect(await calls().last().getByTestId('cache-reuse').textContent()).toMatch(/reused/);
    expect(await calls().last().getByTestId('cache-call-budget').textContent()).toBe(
      'within 3,000 tokens',
    );
    // Escape in the message box (now asking for the reply) does not close the panel; Escape in
    // the panel does.
    await page.getByRole('textbox', { name: 'Assistant reply' }).press('Escape');
    expect(await dialog().count()).toBe(1);
    await dialog().getByLabel('Token budget').press('Escape');
    await expect.poll(() => dialog().count()).toBe(0);
  });
});
