import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { chatRoute, scriptedModel, TestChat, textOf } from './__fixtures__/cycle-test-kit';
import { createChatCycle } from './chat-cycle';

// A stopped reply, as the AI SDK's own client leaves it: the client keeps its copy with the parts
// that were still streaming (`state: 'streaming'`), the cycle stores it settled. The next turn
// must see the two as the same message, and nothing is ever stored `streaming`.

const engine = { renderer: new XmlRenderer() };

function setup(store = new InMemoryContextStore()) {
  const model = scriptedModel();
  // The client's stop is the stop here (`stopOnDisconnect`): with live replies on, a disconnect
  // alone would let the reply run to its end.
  const route = chatRoute(
    (streams) => createChatCycle({ store, engine, streams, stopOnDisconnect: true }),
    model,
  );
  return { store, model, route };
}

/** Sends `text` and stops the reply once `reached` holds for the client's messages. */
async function sendAndStop(
  chat: TestChat,
  route: ReturnType<typeof setup>['route'],
  text: string,
  reached: (messages: readonly UIMessage[]) => boolean,
): Promise<void> {
  const saved = route.nextReplyDone();
  const sending = chat.sendMessage({ text });
  await chat.until(reached);
  await chat.stop();
  await sending;
  await saved;
}

async function send(
  chat: TestChat,
  route: ReturnType<typeof setup>['route'],
  text: string,
): Promise<void> {
  const saved = route.nextReplyDone();
  await chat.sendMessage({ text });
  await saved;
  expect(chat.currentError).toBeUndefined();
}

const streamingParts = (messages: readonly UIMessage[]): number =>
  JSON.stringify(messages).split('"streaming"').length - 1;

describe('a stopped reply, then the next message', () => {
  it('stop after a word, then send: one copy of the reply, settled, and no second version', async () => {
    const { store, route } = setup();
    const chat = new TestChat('stop-word', route);
    await sendAndStop(chat, route, 'hang after a word', (messages) => {
      return textOf(messages[1]) === 'Partial ';
    });
    // What the AI SDK client keeps: the text part still streaming.
    expect(chat.messages[1]?.parts.at(-1)).toMatchObject({ type: 'text', state: 'streaming' });
    const replyId = chat.messages[1]?.id as string;
    await send(chat, route, 'next question');
    const stored = await route.cycle.messages('stop-word', { userId: 'u' });
    expect(stored.map((message) => message.id)).toEqual(chat.messages.map((message) => message.id));
    expect(stored[1]?.parts.at(-1)).toEqual({ type: 'text', text: 'Partial ', state: 'done' });
    expect(textOf(stored[3])).toBe('You said: next question');
    expect(streamingParts(stored)).toBe(0);
    // No "1 / 2": the reply has one version, one node.
    expect(await route.cycle.versions('stop-word', replyId, { userId: 'u' })).toHaveLength(1);
    const graph = await store.getGraph('stop-word');
    expect(graph.nodes.map((node) => node.id).filter((id) => id.includes('~'))).toEqual([]);
    expect(graph.nodes).toHaveLength(4);
    expect(streamingParts(graph.nodes.map((node) => node.message as UIMessage))).toBe(0);
    // And again: the client still holds its streaming copy; the third turn changes nothing before it.
    await send(chat, route, 'third question');
    expect((await store.getGraph('stop-word')).nodes).toHaveLength(6);
    expect(await route.cycle.versions('stop-word', replyId, { userId: 'u' })).toHaveLength(1);
  });

  it('stop while a server-side tool runs, then send: the settled call is the same message', async () => {
    const { store, route } = setup();
    const chat = new TestChat('stop-tool', route);
    await sendAndStop(chat, route, 'hang in a tool', (messages) =>
      (messages[1]?.parts ?? []).some(
        (part) => part.type === 'tool-lookup' && part.state === 'input-available',
      ),
    );
    const replyId = chat.messages[1]?.id as string;
    await send(chat, route, 'next question');
    const stored = await route.cycle.messages('stop-tool', { userId: 'u' });
    expect(stored.map((message) => message.id)).toEqual(chat.messages.map((message) => message.id));
    expect(stored[1]?.parts.find((part) => part.type === 'tool-lookup')).toMatchObject({
      state: 'output-error',
      errorText: 'The reply was stopped.',
    });
    expect(await route.cycle.versions('stop-tool', replyId, { userId: 'u' })).toHaveLength(1);
    expect((await store.getGraph('stop-tool')).nodes).toHaveLength(4);
  });

  it('a half reply the server never saved (it restarted mid-reply) is stored settled', async () => {
    const { store, route } = setup();
    // The question was stored; the server died while streaming the reply, so only the tab has it.
    const question: UIMessage = { id: 'q1', role: 'user', parts: [{ type: 'text', text: 'hi' }] };
    await route.cycle.begin({ id: 'restarted', messages: [question] }, { userId: 'u' });
    const half: UIMessage = {
      id: 'half-reply',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'reasoning', text: 'Thinking', state: 'streaming' },
        { type: 'text', text: 'Half of an ans', state: 'streaming' },
      ],
    };
    const chat = new TestChat('restarted', route, [question, half]);
    await send(chat, route, 'are you there?');
    const stored = await route.cycle.messages('restarted', { userId: 'u' });
    expect(stored.map((message) => message.id)).toEqual(chat.messages.map((message) => message.id));
    expect(stored[1]?.parts).toEqual([
      { type: 'step-start' },
      { type: 'reasoning', text: 'Thinking', state: 'done' },
      { type: 'text', text: 'Half of an ans', state: 'done' },
    ]);
    expect(
      streamingParts(
        (await store.getGraph('restarted')).nodes.map((node) => node.message as UIMessage),
      ),
    ).toBe(0);
    // The tab's next turn sends its streaming copy again: still the same message.
    await send(chat, route, 'and now?');
    expect(await route.cycle.versions('restarted', 'half-reply', { userId: 'u' })).toHaveLength(1);
    expect((await store.getGraph('restarted')).nodes).toHaveLength(6);
  });
});

describe('a reply stopped before its first word', () => {
  it('is not stored, and the next turn continues from the question', async () => {
    const { store, route } = setup();
    const chat = new TestChat('stop-early', route);
    await sendAndStop(chat, route, 'hang before a word', (messages) =>
      (messages[1]?.parts ?? []).some((part) => part.type === 'text'),
    );
    // The client keeps an empty reply: a text part that never got a word.
    expect(chat.messages[1]?.parts.at(-1)).toEqual({ type: 'text', text: '', state: 'streaming' });
    expect((await route.cycle.messages('stop-early', { userId: 'u' })).map((m) => m.role)).toEqual([
      'user',
    ]);
    await send(chat, route, 'second try');
    const stored = await route.cycle.messages('stop-early', { userId: 'u' });
    expect(stored.map((message) => [message.role, textOf(message)])).toEqual([
      ['user', 'hang before a word'],
      ['user', 'second try'],
      ['assistant', 'You said: second try'],
    ]);
    // The tab still shows its empty reply; its next turn lands on the same path.
    await send(chat, route, 'third');
    const after = await route.cycle.messages('stop-early', { userId: 'u' });
    expect(after.map((message) => textOf(message))).toEqual([
      'hang before a word',
      'second try',
      'You said: second try',
      'third',
      'You said: third',
    ]);
    expect((await store.getGraph('stop-early')).nodes).toHaveLength(5);
  });
});
