// The examples of the README and of the API reference, run as written against store-memory, with
// a mock model from `ai/test` standing in for a real provider.
import { assistant, assistantText, user } from '@ctxgraph/codecs';
import { hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { generateText } from 'ai';
import { describe, expect, it } from 'vitest';
import { scriptedModel } from './__fixtures__/test-kit';
import { ContextEngine } from './context-engine';

describe('README and API reference examples', () => {
  it('complete example: resolve, generateText, assistant(response.text), save', async () => {
    const store = new InMemoryContextStore();
    const model = scriptedModel('Hello! How can I help?');

    async function chat(userMessage: string): Promise<string> {
      const context = new ContextEngine({ store, chatId: 'chat-001', userId: 'user-001' });
      context.set(role('You are a friendly assistant.'), hint('Keep responses brief.'));
      context.set(user(userMessage));
      const { systemPrompt, messages } = await context.resolve({
        renderer: new XmlRenderer(),
        format: 'model',
      });
      const response = await generateText({ model, system: systemPrompt, messages });
      context.set(assistant(response.text));
      await context.save();
      return response.text;
    }

    expect(await chat('Hi there')).toBe('Hello! How can I help?');
    expect(await chat('Second question')).toBe('Hello! How can I help?');

    const prompt = model.doGenerateCalls[1]?.prompt ?? [];
    expect(prompt[0]?.role).toBe('system');
    expect(JSON.stringify(prompt[0])).toContain('You are a friendly assistant.');
    // The second call saw the first exchange, then the new question.
    expect(prompt.slice(1).map((entry) => entry.role)).toEqual(['user', 'assistant', 'user']);
    expect((await store.getGraph('chat-001')).nodes).toHaveLength(4);
  });

  it('resolve() output (UI messages) hands to generateText through format: model, and validates as UIMessage[]', async () => {
    const store = new InMemoryContextStore();
    const context = new ContextEngine({ store, chatId: 'c', userId: 'u' }).set(
      role('You are helpful.'),
      user('Hello!'),
    );
    const { messages } = await context.resolve({ renderer: new XmlRenderer() });
    expect(messages).toEqual([
      { id: expect.any(String), role: 'user', parts: [{ type: 'text', text: 'Hello!' }] },
    ]);
  });

  it('branching workflow: rewind to q1, simpler answer on main-v2, both branches kept', async () => {
    const store = new InMemoryContextStore();
    const model = scriptedModel(
      'Recursion is when a function calls itself on a smaller input…',
      'It is like Russian dolls.',
    );
    const context = new ContextEngine({ store, chatId: 'chat-001', userId: 'user-001' }).set(
      role('You are helpful.'),
    );

    context.set(user('Explain recursion', { id: 'q1' }));
    const { systemPrompt, messages } = await context.resolve({
      renderer: new XmlRenderer(),
      format: 'model',
    });
    const response = await generateText({ model, system: systemPrompt, messages });
    context.set(assistant(response.text));
    await context.save();

    await context.rewind('q1');
    expect(context.branch).toBe('main-v2');

    context.set(hint('Explain like I am 5 years old.'));
    const second = await context.resolve({ renderer: new XmlRenderer(), format: 'model' });
    expect(second.systemPrompt).toContain('Explain like I am 5 years old.');
    const simpler = await generateText({
      model,
      system: second.systemPrompt,
      messages: second.messages,
    });
    context.set(assistant(simpler.text));
    await context.save();

    const branches = await store.listBranches(context.chatId);
    expect(branches.map((branch) => branch.name)).toEqual(['main', 'main-v2']);
    await context.switchBranch('main');
    const main = await context.resolve({ renderer: new XmlRenderer() });
    expect(main.messages.at(-1)?.parts).toEqual([
      { type: 'text', text: 'Recursion is when a function calls itself on a smaller input…' },
    ]);
    await context.switchBranch('main-v2');
    const v2 = await context.resolve({ renderer: new XmlRenderer() });
    expect(v2.messages.at(-1)?.parts).toEqual([
      { type: 'text', text: 'It is like Russian dolls.' },
    ]);
  });

  it('rewind example with a UIMessage carrying its own id', async () => {
    const context = new ContextEngine({
      store: new InMemoryContextStore(),
      chatId: 'chat-001',
      userId: 'user-001',
    });
    context.set(user({ id: 'q1', role: 'user', parts: [{ type: 'text', text: 'What is 2+2?' }] }));
    context.set(assistantText('The answer is 5.'));
    await context.save();
    const newBranch = await context.rewind('q1');
    expect(newBranch).toMatchObject({ name: 'main-v2', headMessageId: 'q1' });
    context.set(assistantText('The answer is 4.'));
    await context.save();
  });

  it('btw example: parallel branch, then switch to ask the other question', async () => {
    const store = new InMemoryContextStore();
    const context = new ContextEngine({ store, chatId: 'chat-001', userId: 'user-001' });
    context.set(user('What is the weather?'));
    await context.save();
    const newBranch = await context.btw();
    expect(newBranch.name).toBe('main-v2');
    expect(context.branch).toBe('main');
    await context.switchBranch(newBranch.name);
    context.set(user('Also, what time is it?'));
    await context.save();
    const { messages } = await context.resolve({ renderer: new XmlRenderer() });
    expect(messages).toHaveLength(2);
  });
});
