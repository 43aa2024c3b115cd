// @vitest-environment jsdom
// The README's page (its ```tsx block), written out as it is with `@ctxgraph/react` pointing at
// this package's source: type-checked under `strict`, then rendered under jsdom against the real
// chat handler (the page's `fetch` to `/api/chat` reaches the handler in this process).
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { act, type ComponentType, createElement } from 'react';
import { createRoot } from 'react-dom/client';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createTestChatServer } from '../../client/src/__fixtures__/chat-server';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const packageFolder = join(dirname(fileURLToPath(import.meta.url)), '..');
const readme = readFileSync(join(packageFolder, 'README.md'), 'utf8');
const blocks = [...readme.matchAll(/^```tsx\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '');
// Beside the package's tests, so its imports resolve from the package's node_modules.
const folder = join(packageFolder, 'src', '__fixtures__', 'readme');
mkdirSync(folder, { recursive: true });
const pageFile = join(folder, 'readme-page.tsx');
writeFileSync(
  pageFile,
  `// Written by readme-examples.dom.test.tsx from README.md: do not edit.\n${(
    blocks[0] ?? ''
  ).replace(`from '@ctxgraph/react'`, `from '../../index'`)}`,
);

afterAll(() => {
  vi.unstubAllGlobals();
});

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: packageFolder });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('README.md', () => {
  it('has a page', () => {
    expect(blocks).toHaveLength(1);
    expect(blocks[0]).toContain(`from '@ctxgraph/react'`);
  });

  it('the page type-checks (strict)', async () => {
    const tsc = join(
      dirname(createRequire(import.meta.url).resolve('typescript/package.json')),
      'bin',
      'tsc',
    );
    const check = await run(process.execPath, [
      tsc,
      '--noEmit',
      '--strict',
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
      '--skipLibCheck',
      '--allowImportingTsExtensions',
      '--ignoreConfig',
      pageFile,
    ]);
    expect(check.output).toBe('');
    expect(check.code).toBe(0);
  }, 60_000);

  it('the page sends, streams, stops and marks the stopped reply', async () => {
    const server = createTestChatServer();
    vi.stubGlobal('fetch', server.fetch);
    const { ChatPage } = (await import(pageFile)) as {
      ChatPage: ComponentType<{ chatId: string }>;
    };
    const container = document.createElement('div');
    document.body.append(container);
    const root = createRoot(container);
    await act(async () => root.render(createElement(ChatPage, { chatId: 'readme' })));
    await expect.poll(() => container.querySelector('[aria-label="Message"]')).not.toBeNull();
    const type = async (text: string) => {
      const input = container.querySelector('[aria-label="Message"]') as HTMLInputElement;
      await act(async () => {
        Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set?.call(
          input,
          text,
        );
        input.dispatchEvent(new Event('input', { bubbles: true }));
      });
      await act(async () => (input.closest('form') as HTMLFormElement).requestSubmit());
    };
    const texts = () => [...container.querySelectorAll('li p')].map((item) => item.textContent);
    await type('Hello');
    await expect.poll(texts).toEqual(['Hello', 'You said: Hello']);
    await expect
      .poll(() => (container.querySelector('button[type="submit"]') as HTMLButtonElement).disabled)
      .toBe(true);
    await type('hold it');
    await expect.poll(() => texts().at(-1)).toBe('Holding ');
    const stop = [...container.querySelectorAll('button')].find((b) => b.textContent === 'Stop');
    await act(async () => stop?.click());
    await expect
      .poll(() => container.querySelector('li:last-child em')?.textContent)
      .toBe('aborted');
    await act(async () => root.unmount());
  });
});
