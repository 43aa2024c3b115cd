// The React client in a real browser (Debian's Chromium through playwright-core) against the app
// on a real port with a real SQLite file: send, stream, reload, edit, stop.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../__fixtures__/chat-test-kit';
import { createMockModel } from '../server/mock-model';
import { type RunningChatServer, startChatServer } from '../server/start-server';
import type { ChatUIMessage } from '../server/tools';
import { holdBackAfter, untilStopped } from './browser-kit';

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const packageDirectory = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const installed = existsSync(CHROMIUM_PATH);
if (!installed) {
  if (process.env.CI === 'true') {
    throw new Error(
      `The chat app's browser test needs Chromium at ${CHROMIUM_PATH} and CI=true forbids skipping it: run "apt-get install -y chromium" on the CI machine.`,
    );
  }
  console.warn(`\n[chat-app] Skipping the browser test: no Chromium at ${CHROMIUM_PATH}.\n`);
}

describe.skipIf(!installed)('the chat app in a browser', () => {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-chat-e2e-'));
  const clientDirectory = join(directory, 'client');
  let browser: BrowserContext;
  let running: RunningChatServer;

  beforeAll(async () => {
    const { build } = await import('vite');
    await build({
      configFile: join(packageDirectory, 'vite.config.ts'),
      root: join(packageDirectory, 'src', 'client'),
      logLevel: 'warn',
      build: { outDir: clientDirectory, emptyOutDir: true },
    });
    running = await startChatServer({
      sqlitePath: join(directory, 'chat.db'),
      model: createMockModel({ chunkDelayMs: 5 }),
      port: 0,
      clientDirectory,
    });
    browser = await chromium.launchPersistentContext(join(directory, 'profile'), {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await running?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const texts = (page: Page) => page.getByTestId('message-text').allTextContents();

  it('chats, survives a reload, and edits a message into a new version', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${running.url}/#browser-chat`);
    await page.getByLabel('Message').fill('hello browser');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => texts(page)).toEqual(['hello browser', 'You said: hello browser']);
    await page.getByLabel('Message').fill('and the weather?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect
      .poll(async () => (await texts(page))[3] ?? '')
      .toContain('You said: and the weather?');

    await page.reload();
    await expect.poll(() => texts(page)).toHaveLength(4);
    expect((await texts(page))[0]).toBe('hello browser');

    await page.getByRole('button', { name: 'Edit' }).first().click();
    await page.getByLabel('Edit message').fill('hello again');
    await page.getByRole('button', { name: 'Save and send' }).click();
    await expect.poll(() => texts(page)).toEqual(['hello again', 'You said: hello again']);
    await expect.poll(() => page.getByTestId('versions').count()).toBeGreaterThan(0);
    await page.close();
  });

  const marks = (page: Page) => page.getByTestId('outcome').allTextContents();

  /** What the page shows, what GET …/messages answers, and what a reload shows (marks included). */
  async function threeViews(
    page: Page,
    server: TestServer,
    chatId: string,
  ): Promise<{
    page: string[];
    stored: string[];
    reloaded: string[];
    marks: { page: string[]; stored: string[]; reloaded: string[] };
  }> {
    const shown = await texts(page);
    const shownMarks = await marks(page);
    const answer = await server.messages(chatId);
    expect(answer.status).toBe(200);
    const { messages, outcomes } = answer.body as {
      messages: ChatUIMessage[];
      outcomes: Record<string, 'aborted' | 'interrupted'>;
    };
    await page.reload();
    await expect.poll(() => page.getByTestId('status').textContent()).toBe('ready');
    await expect.poll(() => texts(page)).toHaveLength(messages.length);
    return {
      page: shown,
      stored: messages.map(shownText),
      reloaded: await texts(page),
      marks: {
        page: shownMarks,
        stored: messages.flatMap((message) => {
          const outcome = outcomes[message.id];
          return outcome === undefined ? [] : [outcome === 'aborted' ? 'stopped' : outcome];
        }),
        reloaded: await marks(page),
      },
    };
  }

  describe.each(['sqlite', 'postgres'] as const)('stop, on %s', (store) => {
    /**
     * The app's own mock, a word every 150 ms (a word can be on its way when the page stops), that
     * waits after its last word until it is stopped: the Stop button is there whenever it is clicked.
     */
    let slow: TestServer;
    /** A model that streams its words at once, then waits until it is stopped. */
    let waiting: TestServer;
    beforeAll(async () => {
      slow = await startTestServer({
        store,
        model: untilStopped(createMockModel({ chunkDelayMs: 150 })),
        clientDirectory,
      });
      waiting = await startTestServer({
        store,
        model: untilStopped(createMockModel({ chunkDelayMs: 0 })),
        clientDirectory,
      });
    });
    afterAll(async () => {
      await slow?.stop();
      await waiting?.stop();
    });

    it('after a stop the page shows what is stored, as a reload does', async () => {
      const page = await browser.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${slow.url}/#stop-chat`);
      const question = `please repeat ${Array.from({ length: 40 }, (_, index) => `w${index}`).join(' ')}`;
      await page.getByLabel('Message').fill(question);
      await page.getByRole('button', { name: 'Send' }).click();
      // Stop once a few words are on the page.
      await expect
        .poll(async () => ((await texts(page))[1] ?? '').split(' ').length)
        .toBeGreaterThanOrEqual(5);
      await page.getByRole('button', { name: 'Stop' }).click();
      await expect.poll(() => page.getByTestId('status').textContent()).toBe('ready');
      const views = await threeViews(page, slow, 'stop-chat');
      expect(views.stored).toHaveLength(2);
      expect(views.page).toEqual(views.stored);
      expect(views.reloaded).toEqual(views.stored);
      // The stopped reply is marked, on the page, in the store, after a reload.
      expect(views.marks).toEqual({
        page: ['stopped'],
        stored: ['stopped'],
        reloaded: ['stopped'],
      });
      await page.close();
    });

    it('words the server sent that never reached the page: after the stop the page shows them, as stored', async () => {
      const page = await browser.newPage();
      page.setDefaultTimeout(10_000);
      // A slow network: the page gets the reply's stream up to its third word, the rest is held
      // back (the server sent it; it has not arrived when the user stops).
      await page.addInitScript(holdBackAfter, 3);
      await page.goto(`${waiting.url}/#held-back`);
      await page.getByLabel('Message').fill('one two three four five six');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect
        .poll(() => texts(page))
        .toEqual(['one two three four five six', 'You said: one ']);
      await expect
        .poll(() => page.evaluate(() => (window as { heldBack?: number }).heldBack ?? 0))
        .toBeGreaterThan(0);
      await page.getByRole('button', { name: 'Stop' }).click();
      await expect.poll(() => page.getByTestId('status').textContent()).toBe('ready');
      const views = await threeViews(page, waiting, 'held-back');
      // The server had the whole reply when the stop came: it kept it, and the page shows it.
      expect(views.stored).toEqual([
        'one two three four five six',
        'You said: one two three four five six',
      ]);
      expect(views.page).toEqual(views.stored);
      expect(views.reloaded).toEqual(views.stored);
      expect(views.marks).toEqual({
        page: ['stopped'],
        stored: ['stopped'],
        reloaded: ['stopped'],
      });
      await page.close();
    });

    /** The words the page shows in its message at `index` (the first reply by default). */
    const wordsOf = async (page: Page, index = 1): Promise<number> =>
      ((await texts(page))[index] ?? '').split(' ').filter((word) => word !== '').length;

    it('a reload mid-reply resumes the reply, which goes on streaming; Stop then works on it', async () => {
      const chatId = `reload-${store}`;
      const page = await browser.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${slow.url}/#${chatId}`);
      const question = `please repeat ${Array.from({ length: 40 }, (_, index) => `r${index}`).join(' ')}`;
      await page.getByLabel('Message').fill(question);
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => wordsOf(page)).toBeGreaterThanOrEqual(4);
      await page.reload();
      // The reloaded page shows the question, then the reply resumed from its start, still
      // growing: it follows the live reply, not a copy read once.
      await expect.poll(() => page.getByTestId('status').textContent()).toBe('streaming');
      const resumedAt = await wordsOf(page);
      await expect.poll(() => wordsOf(page)).toBeGreaterThan(resumedAt);
      expect((await texts(page))[0]).toBe(question);
      await page.getByRole('button', { name: 'Stop' }).click();
      await expect.poll(() => page.getByTestId('status').textContent()).toBe('ready');
      const views = await threeViews(page, slow, chatId);
      expect(views.stored).toHaveLength(2);
      expect(views.page).toEqual(views.stored);
      expect(views.reloaded).toEqual(views.stored);
      expect(views.marks).toEqual({
        page: ['stopped'],
        stored: ['stopped'],
        reloaded: ['stopped'],
      });
      await page.close();
    });

    it('a second page on the chat follows the first: the question, the live reply, its stop', async () => {
      const chatId = `tabs-${store}`;
      // The second tab is open before the chat exists: it finds the chat once the first writes.
      const second = await browser.newPage();
      second.setDefaultTimeout(10_000);
      await second.goto(`${slow.url}/#${chatId}`);
      await expect.poll(() => second.getByTestId('status').textContent()).toBe('ready');
      const first = await browser.newPage();
      first.setDefaultTimeout(10_000);
      await first.goto(`${slow.url}/#${chatId}`);
      const question = `please repeat ${Array.from({ length: 40 }, (_, index) => `t${index}`).join(' ')}`;
      await first.getByLabel('Message').fill(question);
      await first.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => wordsOf(first)).toBeGreaterThanOrEqual(3);
      // The second page shows the question and the reply as it streams.
      await expect.poll(() => (async () => (await texts(second))[0])()).toBe(question);
      await expect.poll(() => wordsOf(second)).toBeGreaterThanOrEqual(3);
      await expect.poll(() => second.getByTestId('status').textContent()).toBe('streaming');
      const followedAt = await wordsOf(second);
      await expect.poll(() => wordsOf(second)).toBeGreaterThan(followedAt);

      await first.getByRole('button', { name: 'Stop' }).click();
      await expect.poll(() => first.getByTestId('status').textContent()).toBe('ready');
      const answer = await slow.messages(chatId);
      const { messages } = answer.body as { messages: ChatUIMessage[] };
      const stored = messages.map(shownText);
      expect(stored).toHaveLength(2);
      // Both pages end on what is stored, the reply marked stopped on both.
      for (const page of [first, second]) {
        await expect.poll(() => texts(page)).toEqual(stored);
        await expect.poll(() => marks(page)).toEqual(['stopped']);
        await expect.poll(() => page.getByTestId('status').textContent()).toBe('ready');
      }

      // The second page sends the next turn; the first follows it to its end.
      const next = `please repeat ${Array.from({ length: 40 }, (_, index) => `u${index}`).join(' ')}`;
      await second.getByLabel('Message').fill(next);
      await second.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => (async () => (await texts(first))[2])()).toBe(next);
      // The new reply (the fourth message) streams on both pages before the stop.
      await expect.poll(() => wordsOf(second, 3)).toBeGreaterThan(0);
      await expect.poll(() => wordsOf(first, 3)).toBeGreaterThan(0);
      await expect.poll(() => second.getByTestId('status').textContent()).toBe('streaming');
      await second.getByRole('button', { name: 'Stop' }).click();
      await expect.poll(() => second.getByTestId('status').textContent()).toBe('ready');
      const after = (await slow.messages(chatId)).body as { messages: ChatUIMessage[] };
      expect(after.messages).toHaveLength(4);
      for (const page of [first, second]) {
        await expect.poll(() => texts(page)).toEqual(after.messages.map(shownText));
        await expect.poll(() => marks(page)).toEqual(['stopped', 'stopped']);
      }
      await first.close();
      await second.close();
    });
  });
});

/** The text the page shows for a message (its text parts; the page shows tool parts too). */
function shownText(message: ChatUIMessage): string {
  return message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
