// The ai-sdk README's whole app ("A whole app: one server, one page"), as written: its
// `server.ts` and `page.tsx` blocks copied into a folder of this app (so they import the
// workspace's packages), the page built with vite into `dist`, the server started with Node
// (`PORT=0`) and the page driven in Chromium: a chat, an edit switched back and kept over a
// reload, a second tab that follows, and a stop. Every wait is for a condition, never a time.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumInstalled, launchBrowser } from './browser-kit';

const installed = chromiumInstalled();
const appFolder = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const readme = readFileSync(join(appFolder, '..', '..', 'packages', 'ai-sdk', 'README.md'), 'utf8');

/** The block fenced as ```<language> <file> in the README, as written. */
function block(language: string, file: string): string {
  const found = readme.match(
    new RegExp(`^\`\`\`${language} ${file.replace('.', '\\.')}\\n([\\s\\S]*?)^\`\`\`$`, 'm'),
  );
  if (found?.[1] === undefined)
    throw new Error(`The ai-sdk README has no \`\`\`${language} ${file} block.`);
  return found[1];
}

describe.skipIf(!installed)("the ai-sdk README's whole app, in a browser", () => {
  const folder = join(appFolder, '.readme-app', `run-${process.pid}`);
  let server: ChildProcess;
  let url: string;
  let browser: BrowserContext;

  beforeAll(async () => {
    rmSync(folder, { recursive: true, force: true });
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'server.ts'), block('ts', 'server.ts'));
    writeFileSync(join(folder, 'page.tsx'), block('tsx', 'page.tsx'));
    // The model the README leaves to the app: the reference app's mock, which waits to be
    // stopped when the question says "hold on" (so a stop always comes mid-reply).
    writeFileSync(
      join(folder, 'model.ts'),
      `import { createMockModel } from '../../src/server/mock-model';
import { untilStopped } from '../../src/e2e/browser-kit';
const plain = createMockModel({ chunkDelayMs: 5 });
const held = untilStopped(createMockModel({ chunkDelayMs: 50 }));
export const model: typeof plain = {
  ...plain,
  doStream: (options) =>
    (JSON.stringify(options.prompt.at(-1)).includes('hold on') ? held : plain).doStream(options),
};
`,
    );
    writeFileSync(
      join(folder, 'main.tsx'),
      `import { createRoot } from 'react-dom/client';
import { ChatPage } from './page';
createRoot(document.getElementById('root') as HTMLElement).render(<ChatPage chatId={location.hash.slice(1)} />);
`,
    );
    writeFileSync(
      join(folder, 'index.html'),
      '<!doctype html><html><body><div id="root"></div><script type="module" src="./main.tsx"></script></body></html>',
    );
    const { build } = await import('vite');
    const react = (await import('@vitejs/plugin-react')).default;
    await build({
      configFile: false,
      root: folder,
      logLevel: 'warn',
      plugins: [react()],
      build: { outDir: join(folder, 'dist'), emptyOutDir: true },
    });
    server = spawn(process.execPath, ['--import', 'tsx', 'server.ts'], {
      cwd: folder,
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    url = await new Promise<string>((found, failed) => {
      let output = '';
      server.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = output.match(/Listening on (http:\/\/localhost:\d+)/);
        if (match?.[1] !== undefined) found(match[1]);
      });
      server.once('exit', (code) => failed(new Error(`server.ts exited (${code}): ${output}`)));
    });
    browser = await launchBrowser(join(folder, 'profile'));
  });

  afterAll(async () => {
    await browser?.close();
    server?.kill();
    rmSync(folder, { recursive: true, force: true });
  });

  async function open(chatId: string, query = ''): Promise<Page> {
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${url}/${query}#${chatId}`);
    await page.getByLabel('Message').waitFor();
    return page;
  }
  /** Each message's text (and its outcome), without the buttons. */
  const texts = (page: Page) =>
    page
      .locator('article')
      .evaluateAll((articles) =>
        articles.map((article) =>
          [...article.querySelectorAll('p, em')].map((part) => part.textContent).join(' '),
        ),
      );
  async function send(page: Page, text: string): Promise<void> {
    await page.getByLabel('Message').fill(text);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
  }

  it('the two files type-check (strict)', async () => {
    const tsc = join(
      dirname(createRequire(import.meta.url).resolve('typescript/package.json')),
      'bin',
      'tsc',
    );
    const check = spawnSync(
      process.execPath,
      [
        tsc,
        '--noEmit',
        '--strict',
        '--noUncheckedIndexedAccess',
        '--target',
        'es2022',
        '--lib',
        'es2023,dom,dom.iterable',
        '--module',
        'preserve',
        '--moduleResolution',
        'bundler',
        '--jsx',
        'react-jsx',
        '--types',
        'node',
        '--skipLibCheck',
        '--ignoreConfig',
        join(folder, 'server.ts'),
        join(folder, 'page.tsx'),
      ],
      { cwd: folder, encoding: 'utf8' },
    );
    expect(check.stdout + check.stderr).toBe('');
    expect(check.status).toBe(0);
  });

  it('chats; an edit is a version the picker switches back to, and a reload stays on it', async () => {
    const page = await open('readme-versions');
    await send(page, 'hello');
    await expect.poll(() => texts(page)).toEqual(['hello', 'You said: hello']);
    await page.getByLabel('Message').fill('hola');
    await page.getByRole('button', { name: 'Edit: send the draft in its place' }).click();
    await expect
      .poll(() => texts(page))
      .toEqual([expect.stringContaining('hola'), expect.stringContaining('You said: hola')]);
    await expect.poll(() => page.getByRole('status', { name: 'Version 2 of 2' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Previous version' }).click();
    await expect
      .poll(() => texts(page))
      .toEqual([expect.stringContaining('hello'), 'You said: hello']);
    // The version is in the URL: a reload shows it, not the newest.
    await expect.poll(() => new URL(page.url()).searchParams.get('node')).not.toBeNull();
    await page.reload();
    await expect
      .poll(() => texts(page))
      .toEqual([expect.stringContaining('hello'), 'You said: hello']);
    await expect.poll(() => page.getByRole('status', { name: 'Version 1 of 2' }).count()).toBe(1);
  });

  it('a second tab follows the first; Stop stops the reply on the server, marked as stored', async () => {
    const first = await open('readme-tabs');
    await send(first, 'one');
    await expect.poll(() => texts(first)).toEqual(['one', 'You said: one']);
    const second = await open('readme-tabs');
    await expect.poll(() => texts(second)).toEqual(['one', 'You said: one']);
    await send(first, 'hold on please');
    // The second tab shows the question and the reply as it streams.
    await expect.poll(async () => (await texts(second)).at(-1)).toContain('You said: hold on');
    await first.getByRole('button', { name: 'Stop', exact: true }).click();
    // Both tabs end on the stored reply, marked as stopped.
    for (const page of [first, second]) {
      await expect
        .poll(async () => (await texts(page)).at(-1))
        .toBe('You said: hold on please aborted');
    }
  });
});
