import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedLongChat } from '../server/seed-long-chat';
import { startPlayground } from '../server/start-server';
import { buildClient, chromiumInstalled, launchBrowser } from './browser-harness';

/*
 * The graph stays readable at 10,000 messages (issue #28): fold labels and branch and checkpoint
 * labels never overlap at any zoom (the lower-ranked one is hidden; the current message's and the
 * selected message's labels always show), Fit View fits every drawn node however far the chat
 * is unfolded, and the current message stays in view when a run above it unfolds. Read from the
 * page as drawn: the boxes of the visible label elements. Timings are printed, not asserted.
 */

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The visible labels' boxes on screen: each branch or checkpoint tag, each folded run's label. */
function visibleLabels(page: Page): Promise<Array<Box & { text: string }>> {
  return page.evaluate(() =>
    [...document.querySelectorAll<HTMLElement>('.graph-node-tags .tag, .run-label')]
      .filter((element) => element.checkVisibility({ visibilityProperty: true }))
      .map((element) => {
        const { x, y, width, height } = element.getBoundingClientRect();
        return { x, y, width, height, text: element.textContent ?? '' };
      })
      .filter((box) => box.width > 0 && box.height > 0),
  );
}

/** Pairs of visible labels whose boxes share any area. */
async function overlappingLabels(page: Page): Promise<string[]> {
  const labels = await visibleLabels(page);
  const pairs: string[] = [];
  labels.forEach((a, at) => {
    for (const b of labels.slice(at + 1)) {
      if (
        a.x < b.x + b.width &&
        b.x < a.x + a.width &&
        a.y < b.y + b.height &&
        b.y < a.y + a.height
      )
        pairs.push(`"${a.text}" over "${b.text}"`);
    }
  });
  return pairs;
}

/** Whether a node is drawn and wholly inside the graph's canvas (a pixel of rounding allowed). */
async function insideCanvas(page: Page, locator: Locator): Promise<boolean> {
  const outer = await page.getByTestId('graph-canvas').boundingBox();
  const inner = (await locator.count()) === 0 ? null : await locator.boundingBox();
  return (
    outer !== null &&
    inner !== null &&
    inner.x >= outer.x - 1 &&
    inner.y >= outer.y - 1 &&
    inner.x + inner.width <= outer.x + outer.width + 1 &&
    inner.y + inner.height <= outer.y + outer.height + 1
  );
}

/** The view's zoom, read from React Flow's viewport transform. */
function zoomOf(page: Page): Promise<number> {
  return page.evaluate(() => {
    const viewport = document.querySelector<HTMLElement>('.react-flow__viewport');
    return new DOMMatrix(viewport ? getComputedStyle(viewport).transform : 'none').a;
  });
}

describe.skipIf(!chromiumInstalled())('graph labels at 200, 2,000 and 10,000 messages', () => {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-labels-'));
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
    it(`never overlaps labels at ${count} messages, fits the view and keeps the head in it`, async () => {
      const path = join(directory, `labels-${count}.db`);
      const seeding = performance.now();
      // Twelve side branches with checkpoints, in pairs 4 messages apart: labels that crowd.
      const { chatId } = await seedLongChat({ kind: 'sqlite', path }, count, { forks: 12 });
      console.log(
        `[playground] ${count} messages: seeded with 13 side branches in ${Math.round(performance.now() - seeding)} ms`,
      );
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
        const opened = performance.now();
        await page.goto(`${running.url}#/chat/${chatId}`);
        const head = page.locator('.react-flow__node.current-head');
        await head.waitFor();
        console.log(
          `[playground] ${count} messages: graph shown in ${Math.round(performance.now() - opened)} ms`,
        );
        const fitView = page.getByRole('button', { name: 'Fit view' });
        const zoomIn = page.getByRole('button', { name: 'Zoom in' });
        const zoomOut = page.getByRole('button', { name: 'Zoom out' });

        /** Asserts no two visible labels intersect, and the head's label shows. */
        const checkLabels = async (where: string) => {
          expect(await overlappingLabels(page), where).toEqual([]);
          const headTag = head.locator('.tag.head.active');
          if ((await head.count()) > 0 && (await headTag.count()) > 0)
            expect(await headTag.isVisible(), `${where}: the head's label`).toBe(true);
          const labels = await visibleLabels(page);
          const hidden = await page.locator('.graph-canvas .label-hidden').count();
          return { shown: labels.length, hidden };
        };

        // At fit view, and zoomed in and out from it.
        const fitted = performance.now();
        await fitView.click();
        await expect.poll(() => insideCanvas(page, head)).toBe(true);
        const atFit = await checkLabels('at fit view');
        console.log(
          `[playground] ${count} messages: fit view at zoom ${(await zoomOf(page)).toFixed(3)} in ${Math.round(performance.now() - fitted)} ms, ${atFit.shown} labels shown, ${atFit.hidden} hidden where they would overlap`,
        );
        for (const [steps, button] of [
          [3, zoomIn],
          [3, zoomIn],
          [4, zoomIn],
          [20, zoomOut],
        ] as const) {
          for (let step = 0; step < steps; step += 1) {
            if (await button.isEnabled()) await button.click();
          }
          const zoom = await zoomOf(page);
          const at = await checkLabels(`at zoom ${zoom.toFixed(3)}`);
          console.log(
            `[playground] ${count} messages: zoom ${zoom.toFixed(3)}: ${at.shown} labels shown, ${at.hidden} hidden`,
          );
        }

        // A panned view draws other nodes (only those in view are drawn): still no overlap.
        const canvas = await page.getByTestId('graph-canvas').boundingBox();
        if (canvas) {
          await page.mouse.move(canvas.x + canvas.width / 2, canvas.y + canvas.height / 2);
          await page.mouse.down();
          await page.mouse.move(canvas.x + canvas.width / 2, canvas.y + canvas.height / 2 + 200, {
            steps: 5,
          });
          await page.mouse.up();
          await checkLabels('after a pan');
        }

        // The selected message's label wins too: select the checkpoint a third in.
        await fitView.click();
        const checkpointNode = page.locator('.react-flow__node', {
          has: page.locator('.tag.checkpoint', { hasText: 'a-third-in' }),
        });
        await checkpointNode.click();
        await page.getByRole('complementary', { name: 'Selected message' }).waitFor();
        await fitView.click();
        await checkLabels('at fit view with a message selected');
        const selectedTag = page.locator('.react-flow__node.selected-node .tag.checkpoint');
        await expect.poll(() => selectedTag.isVisible()).toBe(true);
        await page.keyboard.press('Escape');

        // Unfolding a run above the head keeps the head in view, without asking to centre.
        await fitView.click();
        const runs = page.locator('.react-flow__node.run.on-branch');
        const unfolding = performance.now();
        await runs.first().click();
        await expect.poll(() => insideCanvas(page, head)).toBe(true);
        await checkLabels('after unfolding a run');
        // Unfold much more (each long run shows ten more messages at each end per click), then
        // Fit View must still fit every drawn node.
        for (let round = 0; round < 4; round += 1) {
          const total = await runs.count();
          for (let at = 0; at < Math.min(total, 6); at += 1) {
            const run = runs.nth(at);
            if (await insideCanvas(page, run)) await run.click();
          }
          expect(await insideCanvas(page, head), `round ${round}: the head in view`).toBe(true);
        }
        const drawn = await page.locator('.react-flow__node').count();
        console.log(
          `[playground] ${count} messages: runs unfolded (${drawn} nodes drawn) in ${Math.round(performance.now() - unfolding)} ms`,
        );
        await fitView.click();
        await expect
          .poll(async () => {
            const nodes = await page.locator('.react-flow__node').all();
            const inside = await Promise.all(nodes.map((node) => insideCanvas(page, node)));
            return inside.every(Boolean);
          })
          .toBe(true);
        expect(await insideCanvas(page, head)).toBe(true);
        const unfolded = await checkLabels('at fit view after unfolding');
        console.log(
          `[playground] ${count} messages: unfolded fit at zoom ${(await zoomOf(page)).toFixed(3)}, ${unfolded.shown} labels shown, ${unfolded.hidden} hidden`,
        );
        for (let step = 0; step < 5; step += 1) await zoomIn.click();
        await checkLabels('zoomed in after unfolding');
      } finally {
        await page.close();
        await running.close();
      }
      // Dozens of page interactions over a large graph: minutes on a busy machine.
    }, 300_000);
  }
});
