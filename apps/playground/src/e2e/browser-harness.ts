import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { PACKAGE_DIRECTORY } from '../server/playground-config';
import { type RunningPlayground, startPlayground } from '../server/start-server';

/** Where Debian's chromium package puts the browser (`apt-get install chromium`). */
export const CHROMIUM_PATH: string = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** True when the browser the suite drives is installed. */
export function chromiumInstalled(): boolean {
  return existsSync(CHROMIUM_PATH);
}

/**
 * Builds the client with Vite into `outDir`, so the browser tests always run the current source
 * (not whatever dist/client an earlier build left).
 */
export async function buildClient(outDir: string): Promise<void> {
  const { build } = await import('vite');
  await build({
    configFile: join(PACKAGE_DIRECTORY, 'vite.config.ts'),
    root: join(PACKAGE_DIRECTORY, 'src', 'client'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
  });
}

/**
 * Starts headless Chromium with a fresh profile and no network chatter of its own (no sync,
 * updates or background requests: the machine reaches only the package registries).
 */
export async function launchBrowser(
  viewport = { width: 1600, height: 1000 },
): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-chromium-'));
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A suite's playground: a real server on a SQLite file in a temporary folder, and a browser. */
export interface BrowserPlayground {
  readonly browser: BrowserContext;
  readonly running: RunningPlayground;
  /** A JSON request to the API as the suite's user; a non-2xx answer throws. */
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
  /** A new page on a chat, once its graph shows the head (10 s default timeout). */
  openChat(chatId: string): Promise<Page>;
  /** Closes the browser (and its pages) and the server, and removes the folder. */
  close(): Promise<void>;
}

/**
 * Builds the client, starts the server (no model, `userId` as the default user, the store in a
 * new temporary folder named after `name`) and Chromium at 1440x900: what each browser suite
 * starts from.
 */
export async function startBrowserPlayground(
  name: string,
  userId: string,
): Promise<BrowserPlayground> {
  const directory = mkdtempSync(join(tmpdir(), `ctxgraph-playground-${name}-`));
  const clientDirectory = join(directory, 'client');
  await buildClient(clientDirectory);
  const browser = await launchBrowser({ width: 1440, height: 900 });
  const running = await startPlayground(
    {
      port: 0,
      host: '127.0.0.1',
      store: { kind: 'sqlite', path: join(directory, `${name}.db`) },
      model: null,
      defaultUserId: userId,
    },
    { clientDirectory },
  );
  return {
    browser,
    running,
    async call<T>(method: string, path: string, body?: unknown): Promise<T> {
      const response = await fetch(new URL(path, running.url), {
        method,
        headers: { 'content-type': 'application/json', 'x-ctxgraph-user': userId },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status}`);
      return (await response.json()) as T;
    },
    async openChat(chatId: string): Promise<Page> {
      const page = await browser.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${running.url}#/chat/${encodeURIComponent(chatId)}`);
      await page.locator('.react-flow__node.current-head').waitFor();
      return page;
    },
    async close() {
      await browser.close();
      await running.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
