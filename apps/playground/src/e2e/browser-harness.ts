import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';
import { PACKAGE_DIRECTORY } from '../server/playground-config';

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
