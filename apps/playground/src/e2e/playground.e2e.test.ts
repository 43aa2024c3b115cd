import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningPlayground, startPlayground } from '../server/start-server';
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

describe.skipIf(!installed)('playground in a browser', () => {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-e2e-'));
  const databasePath = join(directory, 'e2e.db');
  let running: RunningPlayground;
  let browser: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    const clientDirectory = join(directory, 'client');
    await buildClient(clientDirectory);
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
    browser = await launchBrowser();
    page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(running.url);
  });

  afterAll(async () => {
    await browser?.close();
    await running?.close();
    rmSync(directory, { recursive: true, force: true });
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
      .toContain('fragments[0]');
    await page
      .getByRole('region', { name: 'Load context JSON' })
      .getByRole('button', { name: 'Cancel' })
      .click();
    expect(await page.locator('.fragment-list li').count()).toBe(2);
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
      expect(await page.locator(`.tab-tokens[data-renderer="${renderer}"]`).textContent()).toMatch(
        /\d+ tokens/,
      );
    }
    await page.getByRole('tab', { name: /XML/ }).click();
  });

  it('sends a message and writes the reply by hand', async () => {
    expect(await page.locator('.composer .notice').textContent()).toContain(
      'No model is configured',
    );
    await page.getByLabel('User message').fill('What is 2+2?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => messages().count()).toBe(1);
    await page.getByLabel('Assistant reply').fill('It is 5.');
    await page.getByRole('button', { name: 'Add reply' }).click();
    await expect.poll(() => messages().count()).toBe(2);
    await expect.poll(() => page.locator('.react-flow__node').count()).toBe(2);
  });

  it('rewinds from an earlier node onto a new branch', async () => {
    await page.locator('.react-flow__node', { hasText: 'What is 2+2?' }).click();
    await expect.poll(() => page.locator('.branch-pill').textContent()).toContain('main-v2');
    expect(await messages().count()).toBe(1);
    await page.getByLabel('Assistant reply').fill('It is 4.');
    await page.getByRole('button', { name: 'Add reply' }).click();
    await expect.poll(() => page.locator('.react-flow__node').count()).toBe(3);
    expect(await page.getByLabel('Switch branch').locator('option').allTextContents()).toEqual([
      'main',
      'main-v2',
    ]);
    expect(await page.locator('.tag.head.active').textContent()).toContain('main-v2');
  });

  it('checkpoints and restores', async () => {
    await page.getByLabel('Checkpoint name').fill('answered');
    await page.getByRole('button', { name: 'Checkpoint', exact: true }).click();
    await expect.poll(() => page.locator('.tag.checkpoint').textContent()).toContain('answered');
    await page.getByLabel('User message').fill('Thanks!');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => messages().count()).toBe(3);
    await page.getByRole('button', { name: 'Restore' }).click();
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
    expect(await page.locator('.tag.checkpoint').textContent()).toContain('answered');
    expect(await page.locator('.chat-list').textContent()).toContain('Browser chat');
  });

  it('refuses another user with a clear message', async () => {
    await page.getByLabel('User id').fill('intruder');
    await page.getByRole('button', { name: 'Switch user' }).click();
    await expect.poll(() => notice().textContent()).toContain('belongs to another user');
    expect(await notice().textContent()).toContain('OwnershipError');
    expect(await page.locator('.chat-list li').count()).toBe(0);
  });
});
