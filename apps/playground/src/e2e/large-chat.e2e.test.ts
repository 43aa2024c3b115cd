import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedLongChat } from '../server/seed-long-chat';
import { startPlayground } from '../server/start-server';
import { buildClient, chromiumInstalled, launchBrowser } from './browser-harness';

describe.skipIf(!chromiumInstalled())('a long chat in the browser', () => {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-long-'));
  const clientDirectory = join(directory, 'client');
  let browser: BrowserContext;

  beforeAll(async () => {
    await buildClient(clientDirectory);
    browser = await launchBrowser({ width: 1440, height: 900 });
  });

  afterAll(async () => {
    await browser?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  for (const count of [200, 2000, 10_000]) {
    it(`opens a chat of ${count} messages with the current message in view and the graph usable`, async () => {
      const path = join(directory, `long-${count}.db`);
      const { chatId, lastText } = await seedLongChat({ kind: 'sqlite', path }, count);
      const running = await startPlayground(
        {
          port: 0,
          host: '127.0.0.1',
          store: { kind: 'sqlite', path },
          model: null,
          defaultUserId: 'demo-user',
        },
        { clientDirectory },
      );
      const page = await browser.newPage();
      page.setDefaultTimeout(15_000);
      try {
        const started = performance.now();
        await page.goto(`${running.url}#/chat/${chatId}`);
        await page.locator('.react-flow__node.current-head').waitFor();
        await page.locator('.messages .message').last().waitFor();
        const loaded = performance.now() - started;
        // A figure for the report, not an assertion: timings depend on the machine.
        console.log(
          `[playground] ${count} messages: page, conversation and graph shown in ${Math.round(loaded)} ms`,
        );

        // The conversation ends with the branch's last message, scrolled into view.
        expect(await page.locator('.messages .message').last().textContent()).toContain(lastText);
        // Long conversations draw their latest 200 messages; earlier ones come on request.
        expect(await page.locator('.messages .message').count()).toBe(Math.min(count, 200));
        if (count > 200) {
          await page.getByRole('button', { name: /Show 200 earlier messages/ }).click();
          expect(await page.locator('.messages .message').count()).toBe(400);
        }

        // The current message is inside the canvas, at a readable size.
        const head = page.locator('.react-flow__node.current-head');
        const canvas = await page.getByTestId('graph-canvas').boundingBox();
        const box = await head.boundingBox();
        expect(canvas).not.toBeNull();
        expect(box).not.toBeNull();
        if (canvas && box) {
          expect(box.x).toBeGreaterThanOrEqual(canvas.x);
          expect(box.y).toBeGreaterThanOrEqual(canvas.y);
          expect(box.x + box.width).toBeLessThanOrEqual(canvas.x + canvas.width);
          expect(box.y + box.height).toBeLessThanOrEqual(canvas.y + canvas.height);
          expect(box.width).toBeGreaterThan(150);
        }
        expect(await head.textContent()).toContain(lastText);
        expect(await page.locator('.react-flow__minimap').count()).toBe(1);
        expect(await page.locator('.graph-panel .panel-header').textContent()).toContain(
          `${count + 1} messages`,
        );

        // The whole graph fits in a handful of items, not thousands: the long runs are folded,
        // and the branch labels stay legible (scaled back up) at that zoom.
        await page.getByRole('button', { name: 'Fit view' }).click();
        const runs = page.locator('.react-flow__node.run');
        await expect.poll(() => runs.count()).toBeGreaterThan(0);
        expect(await page.locator('.react-flow__node').count()).toBeLessThan(30);
        const label = await page.locator('.react-flow__node .tag.head.active').boundingBox();
        expect(label?.height ?? 0).toBeGreaterThan(12);

        // Usable: a folded run unfolds on a click, and a message can be selected.
        const firstRun = runs.first();
        const folded = Number(/(\d+) messages/.exec((await firstRun.textContent()) ?? '')?.[1]);
        expect(folded).toBeGreaterThan(3);
        await firstRun.click();
        // A long run shows its first and last ten messages, the rest still folded between them.
        await expect
          .poll(async () => (await page.locator('.react-flow__node.run').allTextContents()).join())
          .not.toContain(`${folded} messages`);
        if (folded > 30) {
          await page.getByRole('button', { name: 'Fit view' }).click();
          await expect
            .poll(() => page.locator('.react-flow__node.run').allTextContents())
            .toContainEqual(expect.stringContaining(`${folded - 20} messages`));
        }
        // The head stays in view after unfolding (the view follows it, not the old fit).
        const inCanvas = async (locator: typeof head) => {
          const outer = await page.getByTestId('graph-canvas').boundingBox();
          const inner = await locator.boundingBox();
          return (
            outer !== null &&
            inner !== null &&
            inner.x >= outer.x - 1 &&
            inner.y >= outer.y - 1 &&
            inner.x + inner.width <= outer.x + outer.width + 1 &&
            inner.y + inner.height <= outer.y + outer.height + 1
          );
        };
        // Fit View fits every drawn node, after unfolding too.
        await page.getByRole('button', { name: 'Fit view' }).click();
        await expect
          .poll(async () => {
            const nodes = await page.locator('.react-flow__node').all();
            const inside = await Promise.all(nodes.map(inCanvas));
            return inside.every(Boolean);
          })
          .toBe(true);

        // Keyboard: the head is the graph's tab stop; Enter opens it in the inspector.
        await page.getByRole('button', { name: 'Centre on the current message' }).click();
        const keyed = performance.now();
        await head.focus();
        await page.keyboard.press('Enter');
        const card = page.getByRole('complementary', { name: 'Selected message' });
        await card.waitFor();
        expect(await card.getByTestId('selected-message-text').textContent()).toBe(lastText);
        console.log(
          `[playground] ${count} messages: inspector opened with Enter in ${Math.round(performance.now() - keyed)} ms`,
        );
        expect(await inCanvas(head)).toBe(true);
        // Up moves to the parent, and the inspector follows on Enter.
        await page.keyboard.press('ArrowUp');
        await page.keyboard.press('Enter');
        await expect
          .poll(() => card.getByTestId('selected-message-text').textContent())
          .toBe(`Question ${count - 2}: what about case ${count - 2}?`);
        await page.keyboard.press('Escape');
        await expect.poll(() => card.count()).toBe(0);

        // Search as you type over the whole chat.
        const searched = performance.now();
        await page.keyboard.press('/');
        await page.keyboard.type(`case ${count - 2}`);
        await expect
          .poll(() => page.getByTestId('search-count').textContent())
          .toMatch(/found on this branch/);
        console.log(
          `[playground] ${count} messages: search as you type answered in ${Math.round(performance.now() - searched)} ms (250 ms pause included)`,
        );
        await page.keyboard.press('Escape');

        // Saving a message answers what changed: its size does not grow with the chat.
        const sends = 20;
        const sent = performance.now();
        let bytes = 0;
        for (let index = 0; index < sends; index += 1) {
          const response = await fetch(new URL(`/api/chats/${chatId}/messages`, running.url), {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-ctxgraph-user': 'demo-user' },
            body: JSON.stringify({
              role: index % 2 === 0 ? 'user' : 'assistant',
              text: `More ${index}`,
            }),
          });
          expect(response.status).toBe(200);
          bytes += (await response.text()).length;
        }
        console.log(
          `[playground] ${count} messages: ${sends} messages saved through the API in ${Math.round(performance.now() - sent)} ms, ${Math.round(bytes / sends)} bytes per answer`,
        );
        expect(bytes / sends).toBeLessThan(4000);
      } finally {
        await page.close();
        await running.close();
      }
    });
  }
});
