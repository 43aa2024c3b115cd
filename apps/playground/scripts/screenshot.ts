// Takes the README's screenshots in docs/, in headless Chromium at 1440x900: the main screen with
// a small seeded chat and a message selected (screenshot.png), the budget and cache views
// (budget.png, cache.png), two branches compared (compare.png), a chat of 2,000 messages with its
// graph folded (long-chat.png), and that chat compacted with a summary written by hand
// (compaction.png).
// Run with `pnpm --filter @ctxgraph/playground screenshot` (needs `apt-get install chromium`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXAMPLE_CONTEXT } from '../src/client/fragment-catalog';
import {
  buildClient,
  CHROMIUM_PATH,
  chromiumInstalled,
  launchBrowser,
} from '../src/e2e/browser-harness';
import { PACKAGE_DIRECTORY } from '../src/server/playground-config';
import { seedLongChat } from '../src/server/seed-long-chat';
import { startPlayground } from '../src/server/start-server';

if (!chromiumInstalled()) {
  console.error(`No Chromium at ${CHROMIUM_PATH}: install it with "apt-get install -y chromium".`);
  process.exit(1);
}

const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-shot-'));
const clientDirectory = join(directory, 'client');
await buildClient(clientDirectory);
const databasePath = join(directory, 'screenshot.db');
const long = await seedLongChat({ kind: 'sqlite', path: databasePath }, 2000);
const running = await startPlayground(
  {
    port: 0,
    host: '127.0.0.1',
    store: { kind: 'sqlite', path: databasePath },
    model: null,
    defaultUserId: 'demo-user',
  },
  { clientDirectory },
);

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(new URL(path, running.url), {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok)
    throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

interface View {
  chat: { id: string };
  graph: { nodes: Array<{ id: string; text: string }> };
}

try {
  await call('POST', '/api/chats', { title: 'Onboarding notes' });
  await call('POST', '/api/chats', { title: 'SQL style review' });
  const chat = await call<View>('POST', '/api/chats', { title: 'Revenue questions' });
  const id = chat.chat.id;
  await call('PUT', `/api/chats/${id}/context`, { fragments: EXAMPLE_CONTEXT });
  // Each answer is what changed; the chat is read whole afterwards.
  const say = async (role: 'user' | 'assistant', text: string) => {
    await call('POST', `/api/chats/${id}/messages`, { role, text });
    return call<View>('GET', `/api/chats/${id}`);
  };
  await say('user', 'What was MRR last month?');
  await say('assistant', 'SELECT sum(amount) FROM invoices WHERE month = 10;');
  const view = await say('user', 'In dollars, please.');
  await say('assistant', 'SELECT sum(amount) / 100.0 AS mrr_usd FROM invoices WHERE month = 10;');
  await call('POST', `/api/chats/${id}/checkpoints`, { name: 'mrr-answer' });
  const first = view.graph.nodes[0]!;
  await call('POST', `/api/chats/${id}/rewind`, { messageId: first.id });
  await say(
    'assistant',
    'MRR is the sum of active subscriptions: SELECT sum(amount) / 100.0 FROM subscriptions WHERE active;',
  );
  await say('user', 'And the month before?');

  const browser = await launchBrowser({ width: 1440, height: 900 });
  const page = await browser.newPage();
  const shot = async (name: string) => {
    await page.waitForTimeout(500);
    const output = join(PACKAGE_DIRECTORY, 'docs', name);
    await page.screenshot({ path: output });
    console.log(`Saved ${output}`);
  };
  await page.goto(`${running.url}#/chat/${encodeURIComponent(id)}`);
  await page.locator('.react-flow__node').first().waitFor();
  await page.getByRole('button', { name: 'Dismiss the no-model notice' }).click();
  await page.locator('.react-flow__node', { hasText: 'In dollars, please.' }).click();
  await shot('screenshot.png');
  await page.getByRole('button', { name: 'Use the dark theme' }).click();
  await shot('screenshot-dark.png');
  await page.getByRole('button', { name: 'Use the light theme' }).click();

  await page.getByRole('button', { name: 'Close' }).click();
  await page.getByRole('button', { name: 'Compare…' }).click();
  const compare = page.getByRole('dialog', { name: 'Compare branches' });
  await compare.getByTestId('side-figures').first().waitFor();
  await shot('compare.png');
  await compare.getByRole('button', { name: 'Close' }).click();
  await page.getByRole('button', { name: 'Budget & cache' }).click();
  const budget = page.getByRole('dialog', { name: 'Budget and cache' });
  await budget.getByLabel('Token budget').fill('280');
  await budget.getByLabel('Token budget').press('Enter');
  await budget.getByTestId('budget-total').waitFor();
  await shot('budget.png');
  await budget.getByRole('button', { name: 'Close' }).click();
  // Two more turns, then a changed fragment: the cache view shows where the prefix broke.
  await page.getByRole('button', { name: 'Budget & cache' }).click();
  await budget.getByRole('button', { name: 'Cache' }).click();
  await budget.getByRole('button', { name: 'Close' }).click();
  await page
    .getByLabel('Assistant reply')
    .fill('SELECT sum(amount) / 100.0 FROM subscriptions WHERE active AND month = 9;');
  await page.getByRole('button', { name: 'Add reply' }).click();
  await page.locator('.messages .message', { hasText: 'month = 9' }).waitFor();
  await page.getByRole('button', { name: 'Budget & cache' }).click();
  await budget.getByRole('button', { name: 'Cache' }).click();
  await budget.getByRole('button', { name: 'Close' }).click();
  await page.locator('.fragment-list li').nth(2).getByTitle('Remove').click();
  await page.getByRole('button', { name: 'Budget & cache' }).click();
  await budget.getByRole('button', { name: 'Cache' }).click();
  await budget.getByRole('button', { name: 'Record a call now' }).click();
  await budget.locator('.cache-turn').nth(2).waitFor();
  await shot('cache.png');
  await budget.getByRole('button', { name: 'Close' }).click();

  await page.goto(`${running.url}#/chat/${encodeURIComponent(long.chatId)}`);
  await page.locator('.react-flow__node.current-head').waitFor();
  await page.getByRole('button', { name: 'Fit view' }).click();
  await shot('long-chat.png');
  await page.getByRole('button', { name: 'Graph only' }).click();
  await page.getByRole('button', { name: 'Use the dark theme' }).click();
  await page.getByRole('button', { name: 'Fit view' }).click();
  await shot('long-chat-dark.png');
  await page.getByRole('button', { name: 'Use the light theme' }).click();
  await page.getByRole('button', { name: 'Graph only' }).click();

  await page.getByRole('button', { name: 'Compact…' }).click();
  const compact = page.getByRole('dialog', { name: 'Compact the conversation' });
  await compact.getByLabel('Turns to keep').fill('2');
  await compact
    .getByLabel('Summary')
    .fill('The user asked about cases 0 to 1995, one per question; each was answered.');
  await compact.getByRole('button', { name: 'Compact' }).click();
  const node = page.locator('.react-flow__node.compaction');
  await node.waitFor();
  await node.click();
  await page.locator('.compaction-originals summary').click();
  await shot('compaction.png');
  await browser.close();
} finally {
  await running.close();
  rmSync(directory, { recursive: true, force: true });
}
