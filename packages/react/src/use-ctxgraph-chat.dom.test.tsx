// @vitest-environment jsdom
// The hook and the branch picker rendered by React under jsdom, against the real chat handler
// over the memory store (called in this process as the page's `fetch`).
import type { UIMessage } from 'ai';
import { act, StrictMode } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createTestChatServer,
  type TestChatServer,
} from '../../client/src/__fixtures__/chat-server';
import { serverSupport } from '../../client/src/__fixtures__/server-support';
import { BranchPicker } from './branch-picker';
import { type UseCtxgraphChatHelpers, useCtxgraphChat } from './use-ctxgraph-chat';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const support = await serverSupport();

const textOf = (message: UIMessage): string =>
  message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');

interface Tab {
  readonly container: HTMLElement;
  readonly root: Root;
  /** The hook's helpers as the last render returned them. */
  chat(): UseCtxgraphChatHelpers;
  /** The texts the page shows. */
  texts(): string[];
  /** The nodes the hook asked the URL to show. */
  readonly nodes: (string | null)[];
}

const mounted: Root[] = [];
afterEach(async () => {
  for (const root of mounted.splice(0)) await act(async () => root.unmount());
  document.body.innerHTML = '';
});

function Page(props: {
  chatId: string;
  server: TestChatServer;
  node?: string;
  onNode: (node: string | null) => void;
  onRender: (chat: UseCtxgraphChatHelpers) => void;
}) {
  const chat = useCtxgraphChat({
    id: props.chatId,
    fetch: props.server.fetch,
    node: props.node ?? null,
    onNodeChange: props.onNode,
  });
  props.onRender(chat);
  if (!chat.loaded) return <p>Loading…</p>;
  return (
    <ol>
      {chat.messages.map((message) => (
        <li key={message.id} data-role={message.role} data-outcome={chat.outcomes[message.id]}>
          <span data-testid="text">{textOf(message)}</span>
          <BranchPicker versions={chat.versionsOf(message.id)} />
        </li>
      ))}
    </ol>
  );
}

async function mount(server: TestChatServer, chatId: string, node?: string): Promise<Tab> {
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  mounted.push(root);
  let latest: UseCtxgraphChatHelpers | undefined;
  const nodes: (string | null)[] = [];
  await act(async () => {
    root.render(
      <StrictMode>
        <Page
          chatId={chatId}
          server={server}
          {...(node === undefined ? {} : { node })}
          onNode={(value) => nodes.push(value)}
          onRender={(chat) => {
            latest = chat;
          }}
        />
      </StrictMode>,
    );
  });
  const tab: Tab = {
    container,
    root,
    nodes,
    chat: () => latest as UseCtxgraphChatHelpers,
    texts: () =>
      [...container.querySelectorAll('[data-testid="text"]')].map((item) => item.textContent ?? ''),
  };
  await expect.poll(() => tab.chat().loaded).toBe(true);
  return tab;
}

/** Waits until the tab is idle and has read its turn's path back. */
async function settled(tab: Tab): Promise<void> {
  await expect
    .poll(() => {
      const chat = tab.chat();
      return chat.status === 'ready' && !chat.stopping && !chat.isNew;
    })
    .toBe(true);
}

describe('useCtxgraphChat', () => {
  it('starts a new chat, streams its reply, and a remount shows what was saved', async () => {
    const server = createTestChatServer();
    const tab = await mount(server, 'r-new');
    expect(tab.chat().isNew).toBe(true);
    expect(tab.texts()).toEqual([]);
    await act(async () => {
      await tab.chat().sendMessage({ text: 'Hello' });
    });
    await expect.poll(() => tab.texts()).toEqual(['Hello', 'You said: Hello']);
    await settled(tab);
    const again = await mount(server, 'r-new');
    expect(again.texts()).toEqual(['Hello', 'You said: Hello']);
    expect(again.chat().isNew).toBe(false);
    // Once: the strict mode's second start did not resume or send twice.
    expect(server.asked).toEqual(['Hello']);
  });

  it('stops a reply through the server and marks it stopped', async () => {
    const server = createTestChatServer();
    const tab = await mount(server, 'r-stop');
    await act(async () => {
      void tab.chat().sendMessage({ text: 'hold still' });
    });
    await expect.poll(() => tab.texts()).toEqual(['hold still', 'Holding ']);
    await act(async () => {
      await tab.chat().stop();
    });
    await settled(tab);
    const reply = tab.container.querySelector('li[data-role="assistant"]');
    expect(reply?.getAttribute('data-outcome')).toBe('aborted');
    expect(tab.texts()).toEqual(['hold still', 'Holding ']);
  });

  it('keeps a second tab current: it shows another tab’s question and streams its reply', async () => {
    const server = createTestChatServer();
    const first = await mount(server, 'r-tabs');
    await act(async () => {
      await first.chat().sendMessage({ text: 'Hello' });
    });
    await settled(first);
    const second = await mount(server, 'r-tabs');
    await act(async () => {
      void first.chat().sendMessage({ text: 'hold both' });
    });
    await expect
      .poll(() => second.texts())
      .toEqual(['Hello', 'You said: Hello', 'hold both', 'Holding ']);
    // A tab opened mid-reply resumes it.
    const third = await mount(server, 'r-tabs');
    await expect.poll(() => third.texts().at(-1)).toBe('Holding ');
    await act(async () => server.release('hold both'));
    for (const tab of [first, second, third]) {
      await expect.poll(() => tab.texts().at(-1)).toBe('Holding done.');
    }
    await settled(second);
    expect(server.asked).toEqual(['Hello', 'hold both']);
  });

  it.skipIf(!support.nodeIds)(
    'switches versions with the branch picker (buttons and keys) and a reload stays on the one chosen',
    async () => {
      const server = createTestChatServer();
      const tab = await mount(server, 'r-versions');
      await act(async () => {
        await tab.chat().sendMessage({ text: 'First' });
      });
      await settled(tab);
      expect(tab.container.querySelector('[role="group"]')).toBeNull();
      const question = tab.chat().messages[0]?.id as string;
      await act(async () => {
        await tab.chat().sendMessage({ text: 'Second', messageId: question });
      });
      await expect.poll(() => tab.texts()).toEqual(['Second', 'You said: Second']);
      await expect.poll(() => tab.container.querySelector('[role="group"]')).not.toBeNull();
      const picker = tab.container.querySelector('[role="group"]') as HTMLElement;
      expect(picker.getAttribute('aria-label')).toBe('Versions');
      expect(picker.dataset.index).toBe('2');
      expect(picker.dataset.count).toBe('2');
      const label = picker.querySelector('[data-ctxgraph-branch-picker-label]');
      expect(label?.textContent).toBe('2 / 2');
      expect(label?.getAttribute('aria-label')).toBe('Version 2 of 2');
      const next = picker.querySelector('[aria-label="Next version"]') as HTMLButtonElement;
      expect(next.disabled).toBe(true);

      const previous = picker.querySelector('[aria-label="Previous version"]') as HTMLButtonElement;
      await act(async () => previous.click());
      await expect.poll(() => tab.texts()).toEqual(['First', 'You said: First']);
      await expect
        .poll(() => tab.container.querySelector('[data-ctxgraph-branch-picker-label]')?.textContent)
        .toBe('1 / 2');
      const chosen = tab.chat().node;
      expect(chosen).not.toBeNull();
      expect(tab.nodes).toEqual([chosen]);

      // A reload with the node from the URL shows the version chosen.
      const reloaded = await mount(server, 'r-versions', chosen as string);
      expect(reloaded.texts()).toEqual(['First', 'You said: First']);

      // The arrow keys switch too.
      const group = tab.container.querySelector('[role="group"]') as HTMLElement;
      await act(async () => {
        group.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', bubbles: true }));
      });
      await expect.poll(() => tab.texts()).toEqual(['Second', 'You said: Second']);
    },
  );
});
