import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningPlayground, startPlayground } from '../server/start-server';
import { type FakeOpenAI, startFakeOpenAI } from '../server/testing/start-fake-openai';
import { buildClient, CHROMIUM_PATH, chromiumInstalled, launchBrowser } from './browser-harness';

const installed = chromiumInstalled();
if (!installed) {
  if (process.env.CI === 'true') {
    throw new Error(
      `The playground browser suite needs Chromium at ${CHROMIUM_PATH} and CI=true forbids skipping it: run "apt-get install -y chromium" on the CI machine.`,
    );
  }
  console.warn(
    `\n[playground] Skipping the browser suite: no Chromium at ${CHROMIUM_PATH}. Install it with "apt-get install -y chromium" (or set CHROMIUM_PATH).\n`,
  );
}

async function openPage(browser: BrowserContext, url: string): Promise<Page> {
  const page = await browser.newPage();
  page.setDefaultTimeout(10_000);
  await page.goto(url);
  return page;
}

describe.skipIf(!installed)('playground in a browser', () => {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-e2e-'));
  const clientDirectory = join(directory, 'client');
  let browser: BrowserContext;

  beforeAll(async () => {
    await buildClient(clientDirectory);
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  describe('with replies written by hand, on SQLite', () => {
    const databasePath = join(directory, 'e2e.db');
    let running: RunningPlayground;
    let page: Page;

    beforeAll(async () => {
      running = await startPlayground(
        {
          port: 0,
          host: '127.0.0.1',
          store: { kind: 'sqlite', path: databasePath },
          model: null,
          defaultUserId: 'e2e-user',
        },
        { clientDirectory },
      );
      page = await openPage(browser, running.url);
    });

    afterAll(async () => {
      await page?.close();
      await running?.close();
    });

    const prompt = () => page.getByTestId('system-prompt');
    const messages = () => page.locator('.messages .message');
    const notice = () => page.locator('.notice-bar');

    it('shows the store it uses', async () => {
      await expect.poll(() => page.getByTestId('store-info').textContent()).toContain('sqlite');
      expect(await page.getByTestId('store-info').textContent()).toContain(databasePath);
    });

    it('creates a chat', async () => {
      await page.getByLabel('New chat title').fill('Browser chat');
      await page.getByRole('button', { name: 'New chat' }).click();
      await page.getByRole('region', { name: 'Context' }).waitFor();
      await expect
        .poll(() => page.locator('.chat-list li.selected').textContent())
        .toContain('Browser chat');
    });

    it('adds a role and a nested group and sees the prompt', async () => {
      await page.getByLabel('Add fragment').selectOption('role');
      await page.getByLabel('Role Text').fill('You are a careful test pilot.');
      await page.getByRole('button', { name: 'Add to context' }).click();
      await expect
        .poll(() => prompt().textContent())
        .toContain('<role>You are a careful test pilot.</role>');

      await page.getByLabel('Add fragment').selectOption('fragment');
      await page.getByLabel('Group (nested) Name').fill('database');
      await page.getByLabel('Add a child fragment').selectOption('hint');
      await page.getByLabel('Hint Text').fill('PostgreSQL 16');
      await page.getByLabel('Add a child fragment').last().selectOption('fragment');
      await page.getByLabel('Group (nested) Name').last().fill('constraints');
      await page.getByLabel('Add a child fragment').last().selectOption('guardrail');
      await page.getByLabel('Guardrail Rule').fill('Never DELETE rows');
      await page.getByRole('button', { name: 'Add to context' }).click();
      await expect.poll(() => page.locator('.fragment-list li').count()).toBe(2);
      const xml = await prompt().textContent();
      expect(xml).toContain('<database>');
      expect(xml).toContain('PostgreSQL 16');
      expect(xml).toContain('Never DELETE rows');
    });

    it('refuses a bad fragment JSON with a clear message', async () => {
      await page.getByLabel('Context menu').click();
      await page.getByRole('button', { name: 'Load JSON…' }).click();
      await page
        .getByRole('textbox', { name: 'Context JSON' })
        .fill('[{"type":"term","name":"MRR"}]');
      await page.getByRole('button', { name: 'Replace context' }).click();
      await expect
        .poll(() => page.locator('.editor .inline-error').textContent())
        .toContain('fragment 1');
      expect(await page.locator('.editor .inline-error').textContent()).not.toContain('toFragment');
      await page
        .getByRole('region', { name: 'Load context JSON' })
        .getByRole('button', { name: 'Cancel' })
        .click();
      expect(await page.locator('.fragment-list li').count()).toBe(2);
    });

    it('marks an incomplete draft invalid and sends no request for it', async () => {
      const previews: string[] = [];
      const listener = (request: { url: () => string }) => {
        if (request.url().endsWith('/api/preview')) previews.push(request.url());
      };
      page.on('request', listener);
      await page.getByLabel('Add fragment').selectOption('term');
      const name = page.getByLabel('Term Term', { exact: true });
      // No error before anything is typed; the first keystroke shows what is still missing.
      expect(await name.getAttribute('aria-invalid')).toBe('false');
      expect(await page.getByTestId('draft-problems').count()).toBe(0);
      await name.pressSequentially('ARR', { delay: 30 });
      await expect
        .poll(() => page.getByTestId('draft-state').textContent())
        .toContain('incomplete');
      expect(await page.getByTestId('draft-problems').textContent()).toContain(
        'Definition is required',
      );
      expect(await page.getByRole('button', { name: 'Add to context' }).isDisabled()).toBe(true);
      // The prompt shown is the saved one, and the page says so.
      expect(await page.locator('.prompt-panel .pill.warn').textContent()).toContain(
        'saved context',
      );
      await page.waitForTimeout(400);
      expect(previews).toEqual([]);
      await page.getByLabel('Term Definition').fill('annual recurring revenue');
      expect(await page.getByLabel('Term Definition').getAttribute('aria-invalid')).toBe('false');
      await expect.poll(() => prompt().textContent()).toContain('annual recurring revenue');
      expect(previews.length).toBeGreaterThan(0);
      page.off('request', listener);
      await page.getByRole('button', { name: 'Cancel' }).click();
      expect(await page.locator('.fragment-list li').count()).toBe(2);
    });

    it('asks before removing every fragment and can undo it', async () => {
      await page.getByLabel('Context menu').click();
      await page.getByRole('button', { name: 'Remove all' }).click();
      const confirm = page.getByRole('alertdialog', { name: 'Confirm removal' });
      await confirm.waitFor();
      expect(await page.locator('.fragment-list li').count()).toBe(2);
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      expect(await page.locator('.fragment-list li').count()).toBe(2);
      await page.getByLabel('Context menu').click();
      await page.getByRole('button', { name: 'Remove all' }).click();
      await confirm.getByRole('button', { name: 'Remove all' }).click();
      await expect.poll(() => page.locator('.fragment-list li').count()).toBe(0);
      await page.getByRole('button', { name: 'Undo' }).click();
      await expect.poll(() => page.locator('.fragment-list li').count()).toBe(2);
      expect(await prompt().textContent()).toContain('Never DELETE rows');
    });

    it('switches renderers and sees the prompt change, with token counts for each', async () => {
      const xml = await prompt().textContent();
      await page.getByRole('tab', { name: /Markdown/ }).click();
      await expect.poll(() => prompt().textContent()).not.toBe(xml);
      const markdown = await prompt().textContent();
      expect(markdown).not.toContain('<role>');
      expect(markdown).toContain('PostgreSQL 16');
      await page.getByRole('tab', { name: /TOON/ }).click();
      await expect.poll(() => prompt().textContent()).not.toBe(markdown);
      for (const renderer of ['xml', 'markdown', 'toon']) {
        expect(
          await page.locator(`.tab-tokens[data-renderer="${renderer}"]`).textContent(),
        ).toMatch(/\d+ tokens/);
      }
      await page.getByRole('tab', { name: /XML/ }).click();
    });

    it('sends a message and writes the reply by hand', async () => {
      const hint = page.getByTestId('no-model-notice');
      expect(await hint.textContent()).toContain('No model: you write the replies');
      // Two lines at most (it names every setting that gives the page a model), and it can be
      // put away for good.
      expect((await hint.boundingBox())?.height).toBeLessThan(48);
      await page.getByRole('button', { name: 'Dismiss the no-model notice' }).click();
      expect(await hint.count()).toBe(0);
      await page.getByLabel('User message').fill('What is 2+2?');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => messages().count()).toBe(1);
      await page.getByLabel('Assistant reply').fill('It is 5.');
      await page.getByRole('button', { name: 'Add reply' }).click();
      await expect.poll(() => messages().count()).toBe(2);
      await expect.poll(() => page.locator('.react-flow__node').count()).toBe(2);
    });

    it('selects a node without changing anything, even clicked twice', async () => {
      const node = page.locator('.react-flow__node', { hasText: 'What is 2+2?' });
      await node.click();
      const card = page.getByRole('complementary', { name: 'Selected message' });
      await card.waitFor();
      expect(await card.getByTestId('selected-message-text').textContent()).toBe('What is 2+2?');
      expect(await card.getByRole('button', { name: 'Branch from here' }).count()).toBe(1);
      await node.dblclick();
      // Three clicks in all: the message is selected again, whatever the page's pace.
      await expect
        .poll(() => card.getByTestId('selected-message-text').textContent())
        .toBe('What is 2+2?');
      expect(await page.getByLabel('Switch branch').locator('option').allTextContents()).toEqual([
        'main',
      ]);
      expect(await page.locator('.branch-pill').textContent()).toContain('main');
      expect(await messages().count()).toBe(2);
    });

    it('branches from an earlier node onto a new branch', async () => {
      const card = page.getByRole('complementary', { name: 'Selected message' });
      if ((await card.count()) === 0)
        await page.locator('.react-flow__node', { hasText: 'What is 2+2?' }).click();
      await card.getByRole('button', { name: 'Branch from here' }).click();
      await expect.poll(() => page.locator('.branch-pill').textContent()).toContain('main-v2');
      expect(await messages().count()).toBe(1);
      await page.getByLabel('Assistant reply').fill('It is 4.');
      await page.getByRole('button', { name: 'Add reply' }).click();
      await expect.poll(() => page.locator('.react-flow__node').count()).toBe(3);
      expect(await page.getByLabel('Switch branch').locator('option').allTextContents()).toEqual([
        'main',
        'main-v2',
      ]);
      expect(await page.locator('.react-flow__node .tag.head.active').textContent()).toContain(
        'main-v2',
      );
    });

    it('checkpoints and restores', async () => {
      await page.getByLabel('Checkpoints').click();
      await page.getByRole('button', { name: 'New checkpoint at the current message…' }).click();
      const card = page.getByRole('complementary', { name: 'Selected message' });
      expect(await card.getByTestId('selected-message-text').textContent()).toBe('It is 4.');
      await card.getByLabel('Checkpoint name').fill('answered');
      await card.getByRole('button', { name: 'Checkpoint here' }).click();
      await expect
        .poll(() => page.locator('.react-flow__node .tag.checkpoint').textContent())
        .toContain('answered');
      await page.getByLabel('User message').fill('Thanks!');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => messages().count()).toBe(3);
      await page.getByLabel('Checkpoints').click();
      await page.getByRole('button', { name: 'Restore answered' }).click();
      await expect.poll(() => page.locator('.branch-pill').textContent()).toContain('main-v3');
      expect(await messages().allTextContents()).toEqual([
        expect.stringContaining('What is 2+2?'),
        expect.stringContaining('It is 4.'),
      ]);
    });

    it('finds everything again after a reload (kept in the SQLite file)', async () => {
      await page.reload();
      await page.getByRole('region', { name: 'Context' }).waitFor();
      expect(await page.locator('.fragment-list li').count()).toBe(2);
      expect(await prompt().textContent()).toContain('Never DELETE rows');
      expect(await page.locator('.branch-pill').textContent()).toContain('main-v3');
      expect(await messages().count()).toBe(2);
      await expect.poll(() => page.locator('.react-flow__node').count()).toBe(4);
      expect(await page.locator('.react-flow__node .tag.checkpoint').textContent()).toContain(
        'answered',
      );
      expect(await page.locator('.chat-list').textContent()).toContain('Browser chat');
    });

    it('forks a side branch without leaving, then switches to it', async () => {
      const side = page.getByRole('button', { name: 'Side branch' });
      expect(await side.getAttribute('title')).toContain('stay on this one');
      await side.click();
      await expect.poll(() => notice().textContent()).toContain('main-v4');
      expect(await page.locator('.branch-pill').textContent()).toContain('main-v3');
      await page.getByLabel('Switch branch').selectOption('main-v4');
      await expect.poll(() => page.locator('.branch-pill').textContent()).toContain('main-v4');
      expect(await messages().count()).toBe(2);
    });

    it('searches the branch or the whole chat and jumps to the hit in the graph', async () => {
      // Searched as it is typed, no Enter needed.
      await page.getByLabel('Search messages').fill('Thanks');
      const results = page.getByRole('region', { name: 'Search results' });
      await expect.poll(() => results.textContent()).toContain('Nothing found on this branch');
      await page.getByLabel('Search in').selectOption('chat');
      await expect.poll(() => results.locator('.search-hit').count()).toBe(1);
      expect(await results.getByTestId('search-count').textContent()).toBe(
        '1 message found in this chat.',
      );
      expect(await results.locator('.search-hit').textContent()).toContain('main-v2');
      await results.locator('.search-hit').click();
      expect(await results.count()).toBe(0);
      const card = page.getByRole('complementary', { name: 'Selected message' });
      expect(await card.getByTestId('selected-message-text').textContent()).toBe('Thanks!');
      expect(await page.locator('.react-flow__node.selected-node').textContent()).toContain(
        'Thanks!',
      );
      await card.getByRole('button', { name: 'Close' }).click();
    });

    it('compares two branches side by side from their common ancestor', async () => {
      await page.getByRole('button', { name: 'Compare…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Compare branches' });
      await dialog.getByLabel('Left branch').selectOption('main');
      await dialog.getByLabel('Right branch').selectOption('main-v2');
      await expect
        .poll(() => dialog.getByTestId('common-ancestor').textContent())
        .toContain('What is 2+2?');
      const left = dialog.getByRole('region', { name: 'Left side' });
      const right = dialog.getByRole('region', { name: 'Right side' });
      await expect
        .poll(() => left.locator('.message').allTextContents())
        .toEqual([expect.stringContaining('It is 5.')]);
      expect(await right.locator('.message').allTextContents()).toEqual([
        expect.stringContaining('It is 4.'),
        expect.stringContaining('Thanks!'),
      ]);
      // Per branch: its own messages' tokens, and what its model calls cost (none here).
      expect(await right.getByTestId('side-figures').textContent()).toMatch(
        /2 messages · \d+ tokens · no model call recorded/,
      );
      await dialog.getByRole('button', { name: 'Close' }).click();

      // From a message's card: compare the branch through it with the current one.
      await page.locator('.react-flow__node', { hasText: 'It is 5.' }).click();
      await page.getByRole('button', { name: 'Compare with current' }).click();
      expect(await dialog.getByLabel('Left branch').inputValue()).toBe('main');
      expect(await dialog.getByLabel('Right branch').inputValue()).toBe('main-v4');
      await dialog.getByRole('button', { name: 'Close' }).click();
      await page
        .getByRole('complementary', { name: 'Selected message' })
        .getByRole('button', { name: 'Close' })
        .click();
    });

    it('fits a 1440x900 screen: one-row graph toolbar, whole checkpoint names, room to read', async () => {
      await page.getByLabel('Checkpoints').click();
      await page.getByRole('button', { name: 'New checkpoint at the current message…' }).click();
      const card = page.getByRole('complementary', { name: 'Selected message' });
      const long = 'before-the-long-discussion-about-revenue';
      await card.getByLabel('Checkpoint name').fill(long);
      await card.getByRole('button', { name: 'Checkpoint here' }).click();
      await expect.poll(() => page.locator('.checkpoint-row').count()).toBe(2);
      await card.getByRole('button', { name: 'Close' }).click();
      await page.setViewportSize({ width: 1440, height: 900 });
      try {
        const toolbar = page.locator('.graph-toolbar');
        const rows = await toolbar.locator('button, select, summary').evaluateAll((elements) =>
          elements
            .filter((element) => element.checkVisibility())
            .map((element) => element.getBoundingClientRect())
            .map((box) => Math.round((box.top + box.bottom) / 2)),
        );
        // Every control on one row (the same middle line), and none pushed out of sight.
        expect(Math.max(...rows) - Math.min(...rows)).toBeLessThanOrEqual(2);
        expect(
          await toolbar.evaluate((element) => element.scrollWidth <= element.clientWidth),
        ).toBe(true);
        // The checkpoint list shows each name whole (nothing cut off).
        await page.getByLabel('Checkpoints').click();
        const name = page.locator('.checkpoint-name', { hasText: long });
        expect(await name.textContent()).toContain(long);
        expect(await name.evaluate((element) => element.scrollWidth <= element.clientWidth)).toBe(
          true,
        );
        await page.getByLabel('Checkpoints').click();
        // The conversation keeps most of its pane for messages.
        const body = await page.locator('.conversation-panel .messages').boundingBox();
        expect(body?.height ?? 0).toBeGreaterThan(220);
      } finally {
        await page.setViewportSize({ width: 1600, height: 1000 });
      }
    });

    it('shows the inspect snapshot and downloads it as JSON', async () => {
      await page.getByRole('button', { name: 'Inspect' }).click();
      const dialog = page.getByRole('dialog', { name: 'Inspect' });
      await dialog.waitFor();
      const figures = dialog.locator('.figures');
      // Every figure says its unit: tokens for sizes, a count noun for counts.
      expect(await figures.textContent()).toMatch(/Input in total[\d,]+ tokens/);
      expect(await figures.textContent()).toMatch(/Saved messages[\d,]+ tokens/);
      expect(await figures.textContent()).toMatch(/Context2 fragments/);
      expect(await figures.textContent()).toMatch(/On this branch2 messages/);
      // The cost is for the default model (gpt-4o-mini), and another can be picked.
      expect(await dialog.getByLabel('Model for the cost').inputValue()).toBe('gpt-4o-mini');
      const miniCost = await figures.locator('div', { hasText: 'Next call' }).textContent();
      expect(miniCost).toContain('gpt-4o-mini');
      await dialog.getByLabel('Model for the cost').selectOption('claude-opus-4');
      await expect
        .poll(() => figures.locator('div', { hasText: 'Next call' }).textContent())
        .toContain('claude-opus-4');
      expect(await figures.locator('div', { hasText: 'Next call' }).textContent()).not.toBe(
        miniCost,
      );
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        dialog.getByRole('button', { name: 'Download JSON' }).click(),
      ]);
      const path = join(directory, 'inspect.json');
      await download.saveAs(path);
      const snapshot = JSON.parse(readFileSync(path, 'utf8'));
      expect(snapshot.meta.branch).toBe('main-v4');
      expect(snapshot.fragments.context).toHaveLength(2);
      expect(snapshot.estimate.tokens).toBeGreaterThan(0);
      await dialog.getByRole('button', { name: 'Close' }).click();
      expect(await dialog.count()).toBe(0);
    });

    it('shows what the model would receive within a budget, what was left out and why', async () => {
      // The role may go first under a budget: priority below 0, set in its form.
      await page.locator('.fragment-list li').first().getByTitle('Edit').click();
      await page.getByLabel('Budget priority').fill('-1');
      await page.getByRole('button', { name: 'Save' }).click();
      await expect
        .poll(() => page.getByRole('region', { name: 'Fragment editor' }).count())
        .toBe(0);
      await page.getByRole('button', { name: 'Budget & cache' }).click();
      const dialog = page.getByRole('dialog', { name: 'Budget and cache' });
      const total = dialog.getByTestId('budget-total');
      await dialog.getByLabel('Token budget').fill('100000');
      await dialog.getByLabel('Token budget').press('Enter');
      await expect.poll(() => total.textContent()).toContain('of 100,000 tokens');
      const sent = Number(
        /receive ([\d,]+) tokens/.exec((await total.textContent()) ?? '')?.[1]?.replace(/,/g, ''),
      );
      expect(sent).toBeGreaterThan(0);
      const fragments = dialog.getByRole('list', { name: 'Fragments in the budget' });
      expect(await fragments.locator('li').count()).toBe(2);
      expect(await fragments.locator('li.kept').count()).toBe(2);
      expect(
        await dialog.getByRole('list', { name: 'Messages in the budget' }).locator('li').count(),
      ).toBe(2);
      expect(await dialog.getByTestId('budget-view').textContent()).toContain(
        'Nothing: everything fits.',
      );
      // A budget one token short: something goes, and the page says what and by which rule.
      await dialog.getByLabel('Token budget').fill(String(sent - 1));
      await dialog.getByLabel('Token budget').press('Enter');
      await expect
        .poll(() => dialog.getByTestId('budget-view').textContent())
        .toMatch(/oldest messages|left out|cannot be left out/);
      const leftOut = dialog.getByRole('list', { name: 'Left out' });
      expect(await leftOut.textContent()).toContain('Fragment “role”');
      expect(await leftOut.textContent()).toContain('its priority is below 0');
      expect(
        await dialog
          .getByRole('list', { name: 'Fragments in the budget' })
          .locator('li.left-out')
          .textContent(),
      ).toContain('left out');
      // A budget nothing fits in says so, in words.
      await dialog.getByLabel('Token budget').fill('1');
      await dialog.getByLabel('Token budget').press('Enter');
      await expect
        .poll(() => dialog.getByTestId('budget-view').textContent())
        .toContain('cannot be left out');
      // It names the real cause: no fragment is marked required here, so it never says to mark
      // fewer; the newest turn (always sent) is named.
      const shortfall = (await dialog.getByTestId('budget-shortfall').textContent()) ?? '';
      expect(shortfall).toContain('over the budget of 1 token:');
      expect(shortfall).not.toContain('mark fewer fragments required');
      expect(shortfall).toMatch(/the newest turn, always sent|fixed overhead/);
      await dialog.getByLabel('Token budget').fill('100000');
      await dialog.getByLabel('Token budget').press('Enter');
      await dialog.getByRole('button', { name: 'Close' }).click();
    });

    it('shows per call how much of the prompt prefix was reused and what broke it', async () => {
      await page.getByRole('button', { name: 'Budget & cache' }).click();
      const dialog = page.getByRole('dialog', { name: 'Budget and cache' });
      await dialog.getByRole('button', { name: 'Cache' }).click();
      const calls = dialog.getByRole('list', { name: 'Recorded calls' }).locator('li.cache-turn');
      // Opening the window made a call at the current message, with the budget it shows.
      await expect
        .poll(() => calls.last().getByTestId('cache-call-budget').textContent())
        .toBe('within 100,000 tokens');
      const before = await calls.count();
      await dialog.getByRole('button', { name: 'Record a call now' }).click();
      await expect.poll(() => calls.count()).toBe(before + 1);
      expect(await calls.last().getByTestId('cache-reuse').textContent()).toMatch(
        /([\d,]+) tokens of \1 tokens reused/,
      );
      await dialog.getByRole('button', { name: 'Close' }).click();
      // Change the first fragment: the next call's prefix breaks there.
      await page.locator('.fragment-list li').first().getByTitle('Remove').click();
      await expect.poll(() => page.locator('.fragment-list li').count()).toBe(1);
      await page.getByRole('button', { name: 'Budget & cache' }).click();
      await dialog.getByRole('button', { name: 'Cache' }).click();
      await dialog.getByRole('button', { name: 'Record a call now' }).click();
      await expect.poll(() => calls.count()).toBe(before + 2);
      expect(await calls.last().getByTestId('cache-break').textContent()).toContain('fragment');
      expect(await calls.last().locator('.segment.broke').count()).toBe(1);
      await dialog.getByRole('button', { name: 'Close' }).click();
    });

    it('deletes a branch after showing what would go', async () => {
      await page.getByRole('button', { name: 'Delete…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete a branch' });
      await dialog.getByLabel('Branch to delete').selectOption('main');
      await expect
        .poll(() => dialog.getByTestId('deletion-preview').textContent())
        .toContain('removes 1 message that only it reached');
      expect(await dialog.getByTestId('deletion-preview').textContent()).toContain(
        'Nothing has changed yet',
      );
      // The preview is a dry run: the branch and its message are still there.
      expect(await page.getByLabel('Switch branch').locator('option').count()).toBe(4);
      await dialog.getByRole('button', { name: 'Delete main' }).click();
      await expect.poll(() => dialog.count()).toBe(0);
      expect(await page.getByLabel('Switch branch').locator('option').allTextContents()).toEqual([
        'main-v2',
        'main-v3',
        'main-v4',
      ]);
      expect(await page.locator('.react-flow__node', { hasText: 'It is 5.' }).count()).toBe(0);
      expect(await notice().textContent()).toContain('main is gone');
    });

    it('compacts with a summary written by hand and draws the compaction node', async () => {
      for (const [question, answer] of [
        ['And 3+3?', 'It is 6.'],
        ['And 4+4?', 'It is 8.'],
      ]) {
        await page.getByLabel('User message').fill(question as string);
        await page.getByRole('button', { name: 'Send' }).click();
        await page.getByLabel('Assistant reply').fill(answer as string);
        await page.getByRole('button', { name: 'Add reply' }).click();
        await expect.poll(() => messages().last().textContent()).toContain(answer);
      }
      await page.getByRole('button', { name: 'Compact…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Compact the conversation' });
      // Without a model the summary is written by hand: the form says so once Compact is
      // pressed (not before), and waits for it.
      expect(await dialog.getByLabel('Summary').getAttribute('aria-invalid')).toBe('false');
      await dialog.getByRole('button', { name: 'Compact' }).click();
      expect(await dialog.getByLabel('Summary').getAttribute('aria-invalid')).toBe('true');
      expect(await dialog.getByRole('button', { name: 'Compact' }).isDisabled()).toBe(true);
      await dialog.getByLabel('Turns to keep').fill('1');
      await dialog.getByLabel('Summary').fill('Sums of small numbers, all answered.');
      await dialog.getByRole('button', { name: 'Compact' }).click();
      await expect.poll(() => notice().textContent()).toContain('replaced by a summary');
      // The conversation sends the summary, then the turn kept.
      expect(await messages().first().textContent()).toContain('summary of earlier messages');
      expect(await messages().count()).toBe(3);
      // The graph draws the compaction node as such; its card lists the originals.
      const node = page.locator('.react-flow__node.compaction');
      await expect.poll(() => node.textContent()).toContain('Summary of 4 messages');
      await node.click();
      const card = page.getByRole('complementary', { name: 'Selected message' });
      await card.locator('.compaction-originals summary').click();
      expect(await card.getByRole('list', { name: 'Original messages' }).textContent()).toContain(
        'What is 2+2?',
      );
      await card.getByRole('button', { name: 'Close' }).click();
    });

    it('refuses another user with a clear message', async () => {
      await page.getByLabel('User id').fill('intruder');
      await page.getByRole('button', { name: 'Switch user' }).click();
      await expect
        .poll(() => page.getByTestId('chat-error').textContent())
        .toContain('belongs to another user');
      expect(await page.locator('.chat-list li').count()).toBe(0);
      // Said once, in the user's words: no notice repeating it, no chat id, no class name.
      expect(await page.locator('.notice-bar.error').count()).toBe(0);
      const text = await page.getByTestId('chat-error').textContent();
      expect(text).not.toContain('OwnershipError');
      expect(text).not.toMatch(/chat "[^"]+"/i);
    });
  });

  describe('with a model behind OPENAI_BASE_URL', () => {
    let fake: FakeOpenAI;
    let running: RunningPlayground;
    let page: Page;

    beforeAll(async () => {
      fake = await startFakeOpenAI(['Recursion ', 'is a function ', 'calling itself.']);
      running = await startPlayground(
        {
          port: 0,
          host: '127.0.0.1',
          store: { kind: 'memory' },
          model: { modelId: 'fake-model', apiKey: 'test', baseURL: fake.baseURL },
          defaultUserId: 'model-user',
        },
        { clientDirectory },
      );
      page = await openPage(browser, running.url);
    });

    afterAll(async () => {
      await page?.close();
      await running?.close();
      await fake?.close();
    });

    it('streams the model reply into the conversation and saves both messages', async () => {
      await expect.poll(() => page.getByTestId('store-info').textContent()).toContain('memory');
      await page.getByLabel('New chat title').fill('Model chat');
      await page.getByRole('button', { name: 'New chat' }).click();
      await page.getByRole('region', { name: 'Context' }).waitFor();
      expect(await page.locator('.conversation-panel .panel-header').textContent()).toContain(
        'model: fake-model',
      );
      await page.getByLabel('User message').fill('Explain recursion');
      await page.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => page.locator('.react-flow__node').count()).toBe(2);
      expect(await page.locator('.messages .message').allTextContents()).toEqual([
        expect.stringContaining('Explain recursion'),
        expect.stringContaining('Recursion is a function calling itself.'),
      ]);
      expect(fake.requests).toHaveLength(1);
    });
  });
});
