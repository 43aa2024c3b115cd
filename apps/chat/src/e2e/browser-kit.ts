// What the chat app's browser tests share: Chromium through playwright-core, the client built
// once into a folder, a model that waits to be stopped, and a network that holds a reply back.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, chromium } from 'playwright-core';
import type { MockLanguageModel } from '../server/mock-model';

/** Where Chromium is (`CHROMIUM_PATH`, else Debian's). */
const CHROMIUM_PATH: string = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The app's folder (where vite.config.ts is). */
const packageDirectory: string = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Whether Chromium is there. Without it a browser test is skipped with a notice, except in CI
 * (`CI=true`), where it fails instead.
 */
export function chromiumInstalled(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  if (process.env.CI === 'true') {
    throw new Error(
      `The chat app's browser test needs Chromium at ${CHROMIUM_PATH} and CI=true forbids skipping it: run "apt-get install -y chromium" on the CI machine.`,
    );
  }
  console.warn(`\n[chat-app] Skipping the browser test: no Chromium at ${CHROMIUM_PATH}.\n`);
  return false;
}

/** Builds the client (vite, the app's own config) into `outDir`. */
export async function buildClient(outDir: string): Promise<void> {
  const { build } = await import('vite');
  await build({
    configFile: join(packageDirectory, 'vite.config.ts'),
    root: join(packageDirectory, 'src', 'client'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
  });
}

/** A headless Chromium with its profile in `profileDirectory`. */
export function launchBrowser(profileDirectory: string): Promise<BrowserContext> {
  return chromium.launchPersistentContext(profileDirectory, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport: { width: 1100, height: 760 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * The model, except that it never ends a reply on its own: after its last word it waits until
 * the call is stopped (the client's stop aborts it), so a stop always comes mid-reply.
 */
export function untilStopped(model: MockLanguageModel): MockLanguageModel {
  return {
    ...model,
    async doStream(options) {
      const { stream } = await model.doStream(options);
      const signal = options.abortSignal;
      return {
        stream: stream.pipeThrough(
          new TransformStream({
            transform(part, controller) {
              if (part.type !== 'text-end' && part.type !== 'finish') controller.enqueue(part);
            },
            flush: () =>
              new Promise<void>((resolve) => {
                if (signal === undefined || signal.aborted) return resolve();
                signal.addEventListener('abort', () => resolve(), { once: true });
              }),
          }),
        ),
      };
    },
  };
}

/**
 * Runs in the page (an init script): `fetch` for `POST /api/chat` passes each reply's stream on up
 * to and including its first event that contains `point` (a string), or its `point`-th text delta
 * (a number), then holds the rest back until the test calls `window.releaseHeld()`;
 * `window.heldBack` counts the events held. A slow network, stopped at a chosen point.
 */
export function holdBackAfter(point: string | number): void {
  const original = window.fetch.bind(window);
  const page = window as unknown as { heldBack: number; releaseHeld: () => void };
  page.heldBack = 0;
  let released = false;
  const waiting: (() => void)[] = [];
  page.releaseHeld = () => {
    released = true;
    for (const wake of waiting.splice(0)) wake();
  };
  window.fetch = async (input, init) => {
    const response = await original(input, init);
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const isChat = init?.method === 'POST' && new URL(url, location.href).pathname === '/api/chat';
    if (!isChat || response.body === null) return response;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let buffer = '';
    let holding = false;
    let deltas = 0;
    const held: string[] = [];
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        for (;;) {
          if (released && held.length > 0) {
            controller.enqueue(encoder.encode(held.splice(0).join('')));
            return;
          }
          const { done, value } = await reader.read();
          if (done) {
            if (holding && !released) await new Promise<void>((wake) => waiting.push(wake));
            if (held.length > 0) controller.enqueue(encoder.encode(held.splice(0).join('')));
            controller.close();
            return;
          }
          buffer += decoder.decode(value, { stream: true });
          let forwarded = false;
          for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
            const event = buffer.slice(0, end + 2);
            buffer = buffer.slice(end + 2);
            // Once holding, every event goes through `held`, released ones too: in order.
            if (holding) {
              held.push(event);
              if (!released) page.heldBack += 1;
              continue;
            }
            controller.enqueue(encoder.encode(event));
            forwarded = true;
            if (event.includes('"type":"text-delta"')) deltas += 1;
            if (typeof point === 'string' ? event.includes(point) : deltas >= point) holding = true;
          }
          if (released && held.length > 0) {
            controller.enqueue(encoder.encode(held.splice(0).join('')));
            return;
          }
          if (forwarded) return;
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
