// @vitest-environment jsdom
// The app's React client (useChat from @ai-sdk/react) under jsdom, against the real server on a
// real port with a real SQLite file.
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../__fixtures__/chat-test-kit';
import type { ChatUIMessage } from '../server/tools';
import { ChatPage } from './chat-page';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.stop();
});

function typeInto(input: HTMLInputElement | HTMLTextAreaElement, value: string): void {
  // React tracks the value through the element's own prototype's setter.
  const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(input), 'value')?.set;
  setter?.call(input, value);
  input.dispatchEvent(new Event('input', { bubbles: true }));
}

function texts(container: HTMLElement): string[] {
  return [...container.querySelectorAll('[data-testid="message-text"]')].map(
    (element) => element.textContent ?? '',
  );
}

async function mount(chatId: string): Promise<{ container: HTMLElement; root: Root }> {
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  await act(async () => {
    root.render(<ChatPage chatId={chatId} apiBase={server.url} />);
  });
  await expect.poll(() => container.querySelector('[aria-label="Message"]')).not.toBeNull();
  return { container, root };
}

async function send(container: HTMLElement, text: string): Promise<void> {
  const input = container.querySelector('[aria-label="Message"]') as HTMLTextAreaElement;
  await act(async () => typeInto(input, text));
  const form = input.closest('form') as HTMLFormElement;
  await act(async () => {
    form.requestSubmit();
  });
}

describe('useChat (React) against the app', () => {
  it('sends, streams, regenerates and edits; a remount shows what the server stored', async () => {
    const chatId = `dom-${Date.now()}`;
    const { container, root } = await mount(chatId);
    await send(container, 'hello from react');
    await expect
      .poll(() => texts(container))
      .toEqual(['hello from react', 'You said: hello from react']);
    await expect
      .poll(() => container.querySelector('[data-testid="status"]')?.textContent)
      .toBe('ready');

    await send(container, 'what is the weather');
    await expect.poll(() => texts(container)[3] ?? '').toContain('You said: what is the weather');

    const stored = (await server.messages(chatId)).body as { messages: ChatUIMessage[] };
    expect(stored.messages).toHaveLength(4);

    // Regenerate the last reply: the page shows a new one; both versions exist.
    const regenerate = [...container.querySelectorAll('button')].filter(
      (button) => button.textContent === 'Regenerate',
    );
    await act(async () => {
      regenerate.at(-1)?.click();
    });
    await expect
      .poll(() => container.querySelector('[data-testid="status"]')?.textContent)
      .toBe('ready');
    const afterRegenerate = (await server.messages(chatId)).body as { messages: ChatUIMessage[] };
    expect(afterRegenerate.messages[3]?.id).not.toBe(stored.messages[3]?.id);

    // Edit the first message: the page shows the new version and its reply.
    const edit = [...container.querySelectorAll('button')].find(
      (button) => button.textContent === 'Edit',
    );
    await act(async () => {
      edit?.click();
    });
    const editor = container.querySelector('[aria-label="Edit message"]') as HTMLTextAreaElement;
    await act(async () => typeInto(editor, 'hello, edited'));
    await act(async () => {
      (editor.closest('form') as HTMLFormElement).requestSubmit();
    });
    await expect.poll(() => texts(container)).toEqual(['hello, edited', 'You said: hello, edited']);
    await expect
      .poll(() => container.querySelector('[data-testid="status"]')?.textContent)
      .toBe('ready');
    await expect
      .poll(() => container.querySelectorAll('[data-testid="versions"]').length)
      .toBeGreaterThan(0);

    await act(async () => root.unmount());
    const again = await mount(chatId);
    await expect
      .poll(() => texts(again.container))
      .toEqual(['hello, edited', 'You said: hello, edited']);
    // The pre-edit path is still stored.
    const old = (await server.messages(chatId, `?leaf=${afterRegenerate.messages[3]?.id}`))
      .body as {
      messages: ChatUIMessage[];
    };
    expect(old.messages).toHaveLength(4);
    await act(async () => again.root.unmount());
  });

  it('an edited message is stored with the metadata the page gives every new message (sentAt)', async () => {
    const chatId = `dom-edit-${Date.now()}`;
    const { container, root } = await mount(chatId);
    const status = () => container.querySelector('[data-testid="status"]')?.textContent;
    await send(container, 'before the edit');
    await expect
      .poll(() => texts(container))
      .toEqual(['before the edit', 'You said: before the edit']);
    await expect.poll(status).toBe('ready');
    const first = ((await server.messages(chatId)).body as { messages: ChatUIMessage[] }).messages;
    expect(first[0]?.metadata).toEqual({ sentAt: expect.any(Number) });

    const edit = [...container.querySelectorAll('button')].find(
      (button) => button.textContent === 'Edit',
    );
    await act(async () => {
      edit?.click();
    });
    const editor = container.querySelector('[aria-label="Edit message"]') as HTMLTextAreaElement;
    await act(async () => typeInto(editor, 'after the edit'));
    await act(async () => {
      (editor.closest('form') as HTMLFormElement).requestSubmit();
    });
    await expect
      .poll(() => texts(container))
      .toEqual(['after the edit', 'You said: after the edit']);
    await expect.poll(status).toBe('ready');
    const edited = ((await server.messages(chatId)).body as { messages: ChatUIMessage[] }).messages;
    expect(edited[0]?.id).toBe(first[0]?.id);
    expect(edited[0]?.metadata).toEqual({ sentAt: expect.any(Number) });
    // The versions carry it too: each was sent by the page.
    const versions = (await (
      await fetch(`${server.url}/api/chat/${chatId}/versions/${first[0]?.id}`)
    ).json()) as { versions: { message: ChatUIMessage }[] };
    expect(versions.versions.map((version) => version.message.metadata)).toEqual([
      { sentAt: expect.any(Number) },
      { sentAt: expect.any(Number) },
    ]);
    await act(async () => root.unmount());
  });
});
