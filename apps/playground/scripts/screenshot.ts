// Takes docs/screenshot.png: the main screen with a small seeded chat, in headless Chromium.
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
import { startPlayground } from '../src/server/start-server';

if (!chromiumInstalled()) {
  console.error(`No Chromium at ${CHROMIUM_PATH}: install it with "apt-get install -y chromium".`);
  process.exit(1);
}

const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-shot-'));
const clientDirectory = join(directory, 'client');
await buildClient(clientDirectory);
const running = await startPlayground(
  {
    port: 0,
    host: '127.0.0.1',
    store: { kind: 'sqlite', path: join(directory, 'screenshot.db') },
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
  const say = (role: 'user' | 'assistant', text: string) =>
    call<View>('POST', `/api/chats/${id}/messages`, { role, text });
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

  const browser = await launchBrowser({ width: 1600, height: 1000 });
  const page = await browser.newPage();
  await page.goto(`${running.url}#/chat/${encodeURIComponent(id)}`);
  await page.locator('.react-flow__node').first().waitFor();
  await page.waitForTimeout(600);
  const output = join(PACKAGE_DIRECTORY, 'docs', 'screenshot.png');
  await page.screenshot({ path: output });
  console.log(`Saved ${output}`);
  await browser.close();
} finally {
  await running.close();
  rmSync(directory, { recursive: true, force: true });
}
