// The React client in a real browser (Debian's Chromium through playwright-core) against the app
// on a real port with a real SQLite file: send, stream, reload, edit.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockModel } from '../server/mock-model';
import { type RunningChatServer, startChatServer } from '../server/start-server';

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
});
