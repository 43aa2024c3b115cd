import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContextEngine } from '@ctxgraph/engine';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEchoModel } from '../server/echo-model';
import { type RunningPlayground, startPlayground } from '../server/start-server';
import { holdAfterWords } from '../server/testing/hold-after-words';
import { buildClient, chromiumInstalled, launchBrowser } from './browser-harness';

/*
 * The playground chatting through @ctxgraph/ai-sdk's chat cycle (issues #26, #27, #28), in real
 * Chromium against the real server and a real SQLite file, with the built-in echo model (usage
 * like a provider with a prefix cache): a reply streams in and is saved with its usage, the page
 * takes in what changed (never reading the whole chat again), an edit shows as versions in the
 * graph, and the cache view shows each call predicted and confirmed.
 */

/** A context long enough for a provider to cache (from 1,024 tokens). */
const LONG_ROLE = Array.from(
  { length: 200 },
  (_, index) => `Rule ${index}: explain graphs with a small example.`,
).join(' ');

describe.skipIf(!chromiumInstalled())('the playground chats through the chat cycle', () => {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-cycle-e2e-'));
  const clientDirectory = join(directory, 'client');
  const databasePath = join(directory, 'cycle.db');
  let browser: BrowserContext;
  let running: RunningPlayground;
  let page: Page;
  /** The echo model, each reply held after four words ("You said: " and two more). */
  const held = holdAfterWords(createEchoModel({ chunkDelayMs: 0 }), 4);
  let chatId = '';
  /** Every API request the page made, as `METHOD path`. */
  const requests: string[] = [];

  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(new URL(path, running.url), {
      method,
      headers: { 'content-type': 'application/json', 'x-ctxgraph-user': 'cycle-user' },
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
        store: { kind: 'sqlite', path: databasePath },
        model: { modelId: 'echo', apiKey: '', baseURL: undefined, kind: 'echo' },
        defaultUserId: 'cycle-user',
      },
      // Each reply is held after four words until the test lets it go on or stops it: the page
      // is seen streaming it however busy the machine.
      { clientDirectory, languageModel: held.model },
    );
    const chat = await call<{ chat: { id: string } }>('POST', '/api/chats', {
      title: 'Cycle chat',
    });
    chatId = chat.chat.id;
    await call('PUT', `/api/chats/${chatId}/context`, {
      fragments: [{ type: 'role', text: LONG_ROLE }],
    });
    page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/api/')) requests.push(`${request.method()} ${url.pathname}`);
    });
    await page.goto(`${running.url}#/chat/${encodeURIComponent(chatId)}`);
    await page.getByRole('textbox', { name: 'User message' }).waitFor();
  });

  afterAll(async () => {
    await page?.close();
    await browser?.close();
    await running?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const conversation = () => page.getByRole('region', { name: 'Conversation' });

  async function ask(text: string): Promise<void> {
    await page.getByRole('textbox', { name: 'User message' }).fill(text);
    const started = performance.now();
    await conversation().getByRole('button', { name: 'Send' }).click();
    // The reply streams into the conversation before it is saved.
    await conversation().locator('.message.assistant.streaming').waitFor();
    held.release();
    await conversation()
      .locator('.message.assistant:not(.streaming) .message-text', { hasText: `You said: ${text}` })
      .waitFor();
    console.log(
      `[playground] reply through the chat cycle shown in ${Math.round(performance.now() - started)} ms`,
    );
  }

  it('streams a reply, saves it with its usage, and takes in what changed', async () => {
    const whole = `GET /api/chats/${chatId}`;
    const before = requests.filter((request) => request === whole).length;
    await ask('What is a graph made of?');
    await ask('Which node comes first?');
    // The page added the exchanges it was told about: it did not read the whole chat again.
    expect(requests.filter((request) => request === whole).length).toBe(before);
    expect(
      requests.filter((request) => request === `POST /api/chats/${chatId}/reply`),
    ).toHaveLength(2);
    await expect.poll(() => conversation().locator('.message.assistant').count()).toBe(2);

    // A fresh engine on the same file counts both calls, with their cache predictions.
    const store = new SqliteContextStore({ path: databasePath });
    try {
      const usage = await new ContextEngine({ store, chatId, userId: 'cycle-user' }).usage();
      expect(usage.calls).toBe(2);
      expect(usage.replies.complete).toBe(2);
      expect(usage.cache.calls).toBe(2);
      expect(usage.cache.readTokens).toBeGreaterThan(0);
    } finally {
      store.close();
    }
  });

  it('an edit shows as versions in the graph and in the inspector', async () => {
    // Edit the second question: branch from the first reply, then ask again.
    // The graph draws only what is in view: fit the whole graph first.
    await page.locator('.react-flow__controls-fitview').click();
    const firstReply = page.locator('.react-flow__node', { hasText: 'You said: What is a graph' });
    await firstReply.click();
    const inspector = page.getByRole('complementary', { name: 'Selected message' });
    await inspector.getByRole('button', { name: /Branch from here/ }).click();
    await ask('Which edge comes first?');

    await page.locator('.react-flow__controls-fitview').click();
    const badges = page.getByTestId('version-badge');
    await expect.poll(() => badges.count()).toBe(2);
    expect((await badges.allTextContents()).sort()).toEqual(['1/2', '2/2']);
    const edited = page
      .locator('.react-flow__node', { hasText: 'Which edge comes first?' })
      .first();
    expect(await edited.locator('[data-testid="version-badge"]').textContent()).toBe('2/2');
    expect(await edited.getAttribute('aria-label')).toContain('version 2 of 2');
    await edited.click();
    await expect
      .poll(() => inspector.getByTestId('version-position').textContent())
      .toBe('Version 2 of 2');
  });

  it('the cache view shows each call predicted and confirmed', async () => {
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: /Budget & cache/ }).click();
    await page.getByRole('button', { name: 'Cache', exact: true }).click();
    const calls = page.getByTestId('cache-call');
    // The active branch holds two replies (the first, and the one after the edit).
    await expect.poll(() => calls.count()).toBe(2);
    const answer = await call<{
      calls: Array<{
        predicted: { readTokens: number; inputTokens: number };
        confirmed: { readTokens: number; inputTokens: number };
      }>;
      totals: { readTokens: number; inputTokens: number };
    }>('GET', `/api/chats/${chatId}/cache-calls`);
    const shown = (value: number) => `${value.toLocaleString('en-US')} tokens`;
    for (const [index, each] of answer.calls.entries()) {
      const row = calls.nth(index);
      expect(await row.getByTestId('cache-predicted').textContent()).toContain(
        `${shown(each.predicted.readTokens)} of ${shown(each.predicted.inputTokens)}`,
      );
      expect(await row.getByTestId('cache-confirmed').textContent()).toContain(
        `${shown(each.confirmed.readTokens)} of ${shown(each.confirmed.inputTokens)}`,
      );
    }
    expect(answer.calls[1]?.confirmed.readTokens).toBeGreaterThan(0);
    expect(await page.getByTestId('cache-totals').textContent()).toContain(
      `${shown(answer.totals.readTokens)} of ${shown(answer.totals.inputTokens)}`,
    );
  });

  it('stops a reply while it streams, from the keyboard, and saves it marked stopped', async () => {
    // The docked budget panel of the last test: Escape inside it closes it.
    const panel = page.getByRole('dialog', { name: 'Budget and cache' });
    if ((await panel.count()) > 0) {
      await panel.getByRole('button', { name: 'Close' }).focus();
      await page.keyboard.press('Escape');
      await expect.poll(() => panel.count()).toBe(0);
    }
    // 80 words echoed back, held after four words until stopped.
    const question = Array.from({ length: 80 }, (_, index) => `word${index}`).join(' ');
    const box = page.getByRole('textbox', { name: 'User message' });
    await box.fill(question);
    await box.press('Control+Enter');
    const streaming = conversation().locator('.message.assistant.streaming');
    await expect.poll(() => streaming.textContent()).toContain('You said: word0 word1 ');
    // The Stop button follows the message box in the tab order, named for what it does.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
      'Stop the reply',
    );
    const stopped = performance.now();
    await page.keyboard.press('Enter');
    await expect.poll(() => streaming.count()).toBe(0);
    console.log(
      `[playground] reply stopped and saved, shown in ${Math.round(performance.now() - stopped)} ms`,
    );
    await expect.poll(() => page.locator('.notice-bar').textContent()).toContain('Stopped');
    const shown =
      (await conversation().locator('.message.assistant .message-text').last().textContent()) ?? '';
    // What the model streamed before the stop, and nothing after it.
    expect(shown.trim()).toBe('You said: word0 word1');
    // Marked as stopped in the conversation (from its recorded outcome), and named so in the graph.
    expect(
      await conversation()
        .locator('.message.assistant')
        .last()
        .getByTestId('reply-outcome')
        .textContent(),
    ).toContain('stopped');
    await expect
      .poll(() => page.locator('.react-flow__node.current-head').getAttribute('aria-label'))
      .toMatch(/; stopped;/);
    // Send is back in place of Stop.
    await conversation().getByRole('button', { name: 'Send' }).waitFor();

    // A fresh engine on the same file: the reply as the integration saves a stopped one, its
    // text what the page shows, its usage recorded with outcome 'aborted'.
    const store = new SqliteContextStore({ path: databasePath });
    try {
      const usage = await new ContextEngine({ store, chatId, userId: 'cycle-user' }).usage();
      expect(usage.replies.aborted).toBe(1);
    } finally {
      store.close();
    }
    const view = await call<{
      messages: Array<{ role: string; parts: Array<{ type: string; text?: string }> }>;
    }>('GET', `/api/chats/${chatId}`);
    const reply = view.messages.at(-1);
    expect(reply?.role).toBe('assistant');
    expect(reply?.parts.map((part) => part.text ?? '').join('')).toBe(shown);

    // The chat goes on from the stopped reply.
    await ask('And after the stop?');
  });
});
