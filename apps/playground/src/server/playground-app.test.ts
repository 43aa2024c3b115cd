import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContextEngine, DEFAULT_MODEL_PRICES } from '@ctxgraph/engine';
import { ChatNotFoundError } from '@ctxgraph/fragments-core';
import { o200kTokenizer } from '@ctxgraph/tokenizer-o200k';
import { MockLanguageModelV3 } from 'ai/test';
import type { Hono } from 'hono';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatView } from './chat-view';
import { openBackend, type PlaygroundBackend } from './open-backend';
import { createPlaygroundApp } from './playground-app';
import type { ModelChoice } from './playground-config';
import { rendererFor } from './renderers';
import { FAKE_USAGE, startFakeOpenAI } from './testing/start-fake-openai';

const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

let databaseCount = 0;
let backend: PlaygroundBackend;
let app: Hono;
let databasePath: string;
const logged: unknown[] = [];

function build(model: ModelChoice | null = null): Hono {
  return createPlaygroundApp({
    store: backend.store,
    storeDescription: backend.description,
    model,
    defaultUserId: 'demo-user',
    logError: (_message, error) => logged.push(error),
  });
}

beforeEach(async () => {
  databaseCount += 1;
  databasePath = join(directory, `playground-${databaseCount}.db`);
  backend = await openBackend({ kind: 'sqlite', path: databasePath });
  app = build();
  logged.length = 0;
});

afterEach(async () => {
  await backend.close();
});

interface Reply {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
  body: any;
}

async function call(
  method: string,
  path: string,
  body?: unknown,
  options: { user?: string; raw?: string; target?: Hono } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.user !== undefined) headers['x-ctxgraph-user'] = options.user;
  const response = await (options.target ?? app).request(path, {
    method,
    headers,
    body: options.raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

async function createChat(title = 'First chat', user?: string): Promise<ChatView> {
  const reply = await call('POST', '/api/chats', { title }, { user });
  expect(reply.status).toBe(201);
  return reply.body as ChatView;
}

/** Saves a message; answers the chat after it (read whole, as the page reads a chat it opens). */
async function say(chatId: string, role: 'user' | 'assistant', text: string): Promise<ChatView> {
  const reply = await call('POST', `/api/chats/${chatId}/messages`, { role, text });
  expect(reply.status).toBe(200);
  const view = await call('GET', `/api/chats/${chatId}`);
  return view.body as ChatView;
}

const richContext = [
  { type: 'role', text: 'You are a careful analytics assistant.' },
  { type: 'hint', text: 'Prefer weekly figures.' },
  {
    type: 'fragment',
    name: 'database',
    children: [
      { type: 'hint', text: 'PostgreSQL 16' },
      {
        type: 'fragment',
        name: 'constraints',
        children: [{ type: 'guardrail', rule: 'Never DELETE rows' }],
      },
    ],
  },
];

describe('info and chats', () => {
  it('describes the store, the default user and that no model is configured', async () => {
    const reply = await call('GET', '/api/info');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      defaultUserId: 'demo-user',
      store: { kind: 'sqlite', location: databasePath },
      model: null,
      renderers: ['xml', 'markdown', 'toon'],
      pricedModels: Object.keys(DEFAULT_MODEL_PRICES),
      defaultModelId: 'gpt-4o-mini',
    });
  });

  it('creates a chat on the main branch with no messages and no context', async () => {
    const view = await createChat('Sales questions');
    expect(view.chat.title).toBe('Sales questions');
    expect(view.chat.userId).toBe('demo-user');
    expect(view.branch).toBe('main');
    expect(view.messages).toEqual([]);
    expect(view.context).toEqual([]);
    expect(view.prompts.map((prompt) => [prompt.renderer, prompt.tokens])).toEqual([
      ['xml', 0],
      ['markdown', 0],
      ['toon', 0],
    ]);
  });

  it('lists a user’s chats page by page and nobody else’s', async () => {
    for (const title of ['one', 'two', 'three']) await createChat(title);
    await createChat('someone else’s', 'other-user');
    const first = await call('GET', '/api/chats?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(2);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await call(
      'GET',
      `/api/chats?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`,
    );
    expect(second.body.items).toHaveLength(1);
    expect(second.body.nextCursor).toBeNull();
    const titles = [...first.body.items, ...second.body.items].map(
      (chat: { title: string }) => chat.title,
    );
    expect(titles.sort()).toEqual(['one', 'three', 'two']);
    const other = await call('GET', '/api/chats', undefined, { user: 'other-user' });
    expect(other.body.items.map((chat: { title: string }) => chat.title)).toEqual([
      'someone else’s',
    ]);
  });

  it('refuses a bad page size and a blank user header', async () => {
    const limit = await call('GET', '/api/chats?limit=0');
    expect(limit.status).toBe(400);
    expect(limit.body.error.message).toContain('limit');
    const blank = await call('GET', '/api/chats', undefined, { user: '   ' });
    expect(blank.status).toBe(400);
    expect(blank.body.error.message).toContain('x-ctxgraph-user');
  });

  it('renames a chat and refuses a title that is not a string', async () => {
    const view = await createChat();
    const renamed = await call('PATCH', `/api/chats/${view.chat.id}`, { title: 'Renamed' });
    expect(renamed.status).toBe(200);
    expect(renamed.body.chat.title).toBe('Renamed');
    const bad = await call('PATCH', `/api/chats/${view.chat.id}`, { title: 42 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.name).toBe('ValidationError');
    expect((await call('GET', `/api/chats/${view.chat.id}`)).body.chat.title).toBe('Renamed');
  });

  it('answers 404 for an unknown chat and never creates it', async () => {
    const reply = await call('GET', '/api/chats/chat-missing');
    expect(reply.status).toBe(404);
    expect(reply.body.error).toMatchObject({
      name: 'ChatNotFoundError',
      message: expect.stringContaining('chat-missing'),
    });
    expect(await backend.store.getChat('chat-missing')).toBeNull();
    const post = await call('POST', '/api/chats/chat-missing/messages', {
      role: 'user',
      text: 'hi',
    });
    expect(post.status).toBe(404);
    expect(await backend.store.getChat('chat-missing')).toBeNull();
  });

  it('refuses another user on every chat route and changes nothing', async () => {
    const view = await createChat('Mine');
    const chatId = view.chat.id;
    await say(chatId, 'user', 'Hello');
    const attempts: Array<[string, string, unknown]> = [
      ['GET', `/api/chats/${chatId}`, undefined],
      ['PATCH', `/api/chats/${chatId}`, { title: 'Stolen' }],
      ['PUT', `/api/chats/${chatId}/context`, { fragments: richContext }],
      ['POST', `/api/chats/${chatId}/messages`, { role: 'user', text: 'intrusion' }],
      ['POST', `/api/chats/${chatId}/checkpoints`, { name: 'x' }],
      ['POST', `/api/chats/${chatId}/btw`, {}],
      ['GET', `/api/chats/${chatId}/inspect`, undefined],
      ['DELETE', `/api/chats/${chatId}`, undefined],
    ];
    for (const [method, path, body] of attempts) {
      const reply = await call(method, path, body, { user: 'mallory' });
      expect(reply.status, `${method} ${path}`).toBe(403);
      expect(reply.body.error.name).toBe('OwnershipError');
      expect(reply.body.error.message).toContain('mallory');
    }
    const after = await call('GET', `/api/chats/${chatId}`);
    expect(after.body.chat.title).toBe('Mine');
    expect(after.body.context).toEqual([]);
    expect(after.body.messages).toHaveLength(1);
    expect(after.body.graph.branches).toHaveLength(1);
    expect(after.body.graph.checkpoints).toEqual([]);
  });

  it('deletes a chat with its context', async () => {
    const view = await createChat();
    await call('PUT', `/api/chats/${view.chat.id}/context`, { fragments: richContext });
    const deleted = await call('DELETE', `/api/chats/${view.chat.id}`);
    expect(deleted.status).toBe(200);
    expect((await call('GET', `/api/chats/${view.chat.id}`)).status).toBe(404);
    // The store deleted the chat's context lane with it: a new chat of that id starts empty.
    await expect(backend.store.getContext?.(view.chat.id)).rejects.toSatisfy((error) =>
      ChatNotFoundError.isInstance(error),
    );
    await backend.store.openChat({ chatId: view.chat.id, userId: 'demo-user' });
    expect(await backend.store.getContext?.(view.chat.id)).toMatchObject({
      fragments: [],
      revision: 0,
    });
  });

  it('answers unknown API routes with a JSON 404', async () => {
    const reply = await call('GET', '/api/nothing-here');
    expect(reply.status).toBe(404);
    expect(reply.body.error.message).toContain('/api/nothing-here');
  });
});

describe('context', () => {
  it('saves fragments of every builder, nested ones too, and renders them with each renderer', async () => {
    const view = await createChat();
    const everything = [
      ...richContext,
      { type: 'term', name: 'MRR', definition: 'monthly recurring revenue' },
      { type: 'guardrail', rule: 'Never expose PII', reason: 'GDPR', action: 'Aggregate' },
      { type: 'explain', concept: 'churn', explanation: 'a customer who cancels' },
      { type: 'example', question: 'Revenue?', answer: 'SELECT sum(amount) FROM invoices' },
      { type: 'clarification', when: 'no period is given', ask: 'Which period?' },
      {
        type: 'workflow',
        task: 'Churn analysis',
        steps: ['Find cancellations', 'Group by cohort'],
      },
      { type: 'quirk', issue: 'Amounts are in cents', workaround: 'Divide by 100' },
      { type: 'styleGuide', prefer: 'CTEs', never: 'SELECT *' },
      {
        type: 'analogy',
        concepts: ['logo churn', 'revenue churn'],
        relationship: 'count vs money',
      },
      { type: 'glossary', entries: { ARR: 'annual recurring revenue' } },
      {
        type: 'principle',
        title: 'Execution order',
        description: 'Preserve prerequisites',
        policies: [
          {
            type: 'policy',
            rule: 'Validate schema first',
            policies: [{ type: 'policy', rule: 'Check table names' }],
          },
        ],
      },
      { type: 'policy', rule: 'Read before write' },
      { type: 'identity', name: 'Sarah', role: 'Finance manager' },
      { type: 'persona', name: 'Ada', tone: 'warm' },
      { type: 'alias', term: 'the big table', meaning: 'analytics.events' },
      { type: 'preference', aspect: 'date format', value: 'YYYY-MM-DD' },
      { type: 'correction', subject: 'fiscal year', wrong: 'January', right: 'April' },
    ];
    const reply = await call('PUT', `/api/chats/${view.chat.id}/context`, {
      fragments: everything,
    });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.context).toHaveLength(everything.length);
    const prompts = reply.body.prompts as ChatView['prompts'];
    for (const prompt of prompts) {
      expect(prompt.error, prompt.renderer).toBeNull();
      expect(prompt.tokens).toBeGreaterThan(50);
      expect(prompt.prompt).toContain('Check table names');
      expect(prompt.prompt).toContain('Never DELETE rows');
    }
    expect(new Set(prompts.map((prompt) => prompt.prompt)).size).toBe(3);
    expect(prompts[0]?.prompt).toContain('<role>');
  });

  it('keeps the context in the SQLite file across a restart', async () => {
    const view = await createChat();
    await call('PUT', `/api/chats/${view.chat.id}/context`, { fragments: richContext });
    await backend.close();
    backend = await openBackend({ kind: 'sqlite', path: databasePath });
    app = build();
    const reply = await call('GET', `/api/chats/${view.chat.id}`);
    expect(reply.status).toBe(200);
    expect(reply.body.context).toEqual(richContext);
    expect(reply.body.prompts[0].prompt).toContain('PostgreSQL 16');
  });

  it('refuses bad fragment JSON with the item and field at fault, keeping the old context', async () => {
    const view = await createChat();
    const path = `/api/chats/${view.chat.id}/context`;
    await call('PUT', path, { fragments: richContext });
    const unknownType = await call('PUT', path, {
      fragments: [richContext[0], { type: 'nonsense', text: 'x' }],
    });
    expect(unknownType.status).toBe(400);
    expect(unknownType.body.error.message).toContain('fragments[1]');
    const missingField = await call('PUT', path, { fragments: [{ type: 'term', name: 'MRR' }] });
    expect(missingField.status).toBe(400);
    expect(missingField.body.error.message).toContain('fragments[0]');
    expect(missingField.body.error.message).toContain('definition');
    const nestedBad = await call('PUT', path, {
      fragments: [{ type: 'fragment', name: 'group', children: [{ type: 'hint', text: '' }] }],
    });
    expect(nestedBad.status).toBe(400);
    expect(nestedBad.body.error.message).toContain('fragments[0].children[0]');
    const notList = await call('PUT', path, { fragments: { type: 'role', text: 'x' } });
    expect(notList.status).toBe(400);
    const notObject = await call('PUT', path, { fragments: [42] });
    expect(notObject.status).toBe(400);
    expect(notObject.body.error.message).toContain('fragments[0]');
    expect((await call('GET', `/api/chats/${view.chat.id}`)).body.context).toEqual(richContext);
  });

  it('refuses a malformed JSON body and unknown fields', async () => {
    const view = await createChat();
    const malformed = await call('PUT', `/api/chats/${view.chat.id}/context`, undefined, {
      raw: '{"fragments": [',
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.message).toContain('not valid JSON');
    const extra = await call('PUT', `/api/chats/${view.chat.id}/context`, {
      fragments: [],
      extra: true,
    });
    expect(extra.status).toBe(400);
  });

  it('previews a draft context without saving it', async () => {
    const reply = await call('POST', '/api/preview', { fragments: richContext });
    expect(reply.status).toBe(200);
    expect(reply.body.fragments).toEqual(richContext);
    expect(reply.body.prompts).toHaveLength(3);
    const bad = await call('POST', '/api/preview', { fragments: [{ type: 'role' }] });
    expect(bad.status).toBe(400);
  });
});

describe('conversation and graph', () => {
  it('answers a saved message with what changed, not the whole chat', async () => {
    const view = await createChat();
    await call('PUT', `/api/chats/${view.chat.id}/context`, { fragments: richContext });
    for (let turn = 0; turn < 30; turn += 1) {
      await say(view.chat.id, turn % 2 === 0 ? 'user' : 'assistant', `Message ${turn}`);
    }
    const before = await call('GET', `/api/chats/${view.chat.id}`);
    const reply = await call('POST', `/api/chats/${view.chat.id}/messages`, {
      role: 'user',
      text: 'One more',
    });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual([
      'branch',
      'branches',
      'chat',
      'headMessageId',
      'message',
      'node',
    ]);
    expect(reply.body.message).toMatchObject({
      role: 'user',
      parts: [{ type: 'text', text: 'One more' }],
    });
    expect(reply.body.node).toMatchObject({
      id: reply.body.headMessageId,
      parentId: before.body.headMessageId,
      role: 'user',
      text: 'One more',
      compaction: null,
    });
    expect(reply.body.branch).toBe('main');
    expect(reply.body.branches).toEqual([
      expect.objectContaining({ name: 'main', headMessageId: reply.body.headMessageId }),
    ]);
    // The chat read afterwards is the one before with exactly this added.
    const after = await call('GET', `/api/chats/${view.chat.id}`);
    expect(after.body.messages).toEqual([...before.body.messages, reply.body.message]);
    expect(after.body.graph.nodes).toEqual([...before.body.graph.nodes, reply.body.node]);
    expect(after.body.chat).toEqual(reply.body.chat);
    // Small: a fraction of the chat it belongs to.
    expect(JSON.stringify(reply.body).length).toBeLessThan(JSON.stringify(after.body).length / 10);
  });

  it('lists the versions of a message (siblings of the same role) and refuses an unknown node', async () => {
    const view = await createChat();
    const chatId = view.chat.id;
    await say(chatId, 'user', 'Question');
    const answered = await say(chatId, 'assistant', 'First answer');
    const first = answered.headMessageId as string;
    const question = answered.graph.nodes[0]?.id as string;
    await call('POST', `/api/chats/${chatId}/rewind`, { messageId: question });
    const second = (await say(chatId, 'assistant', 'Second answer')).headMessageId as string;
    const reply = await call('GET', `/api/chats/${chatId}/versions?nodeId=${second}`);
    expect(reply.status).toBe(200);
    expect(reply.body.versions.map((version: { nodeId: string }) => version.nodeId)).toEqual([
      first,
      second,
    ]);
    expect(reply.body.versions[0].leafNodeId).toBe(first);
    const unknown = await call('GET', `/api/chats/${chatId}/versions?nodeId=nope-nope`);
    expect(unknown.status).toBe(404);
    const missing = await call('GET', `/api/chats/${chatId}/versions`);
    expect(missing.status).toBe(400);
  });

  it('refuses a bad message before writing anything', async () => {
    const view = await createChat();
    for (const body of [
      { role: 'user', text: '' },
      { role: 'system', text: 'hi' },
      { role: 'user', text: 'hi', extra: true },
    ]) {
      const reply = await call('POST', `/api/chats/${view.chat.id}/messages`, body);
      expect(reply.status).toBe(400);
      expect(reply.body.error.name).toBe('ValidationError');
    }
    const after = await call('GET', `/api/chats/${view.chat.id}`);
    expect(after.body.messages).toEqual([]);
  });

  it('saves user and hand-written assistant messages on the branch', async () => {
    const view = await createChat();
    await say(view.chat.id, 'user', 'What is 2+2?');
    const after = await say(view.chat.id, 'assistant', 'It is 4.');
    expect(after.messages.map((message) => [message.role, message.parts])).toEqual([
      ['user', [{ type: 'text', text: 'What is 2+2?' }]],
      ['assistant', [{ type: 'text', text: 'It is 4.' }]],
    ]);
    expect(after.graph.nodes.map((node) => [node.role, node.text])).toEqual([
      ['user', 'What is 2+2?'],
      ['assistant', 'It is 4.'],
    ]);
    expect(after.headMessageId).toBe(after.graph.nodes[1]?.id);
    const empty = await call('POST', `/api/chats/${view.chat.id}/messages`, {
      role: 'user',
      text: '',
    });
    expect(empty.status).toBe(400);
    const badRole = await call('POST', `/api/chats/${view.chat.id}/messages`, {
      role: 'system',
      text: 'x',
    });
    expect(badRole.status).toBe(400);
  });

  it('rewinds to an earlier node onto a new branch, and refuses an unknown node', async () => {
    const view = await createChat();
    await say(view.chat.id, 'user', 'Question');
    const answered = await say(view.chat.id, 'assistant', 'Wrong answer');
    const question = answered.graph.nodes[0]!;
    const rewind = await call('POST', `/api/chats/${view.chat.id}/rewind`, {
      messageId: question.id,
    });
    expect(rewind.status).toBe(200);
    expect(rewind.body.result.name).toBe('main-v2');
    expect(rewind.body.view.branch).toBe('main-v2');
    expect(rewind.body.view.messages).toHaveLength(1);
    const fixed = await say(view.chat.id, 'assistant', 'Right answer');
    expect(fixed.branch).toBe('main-v2');
    expect(fixed.graph.nodes).toHaveLength(3);
    expect(fixed.graph.branches.map((branch) => branch.name)).toEqual(['main', 'main-v2']);
    const unknown = await call('POST', `/api/chats/${view.chat.id}/rewind`, {
      messageId: 'no-such-node',
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.name).toBe('MessageNotFoundError');
  });

  it('checkpoints, restores, refuses a taken or unknown checkpoint name', async () => {
    const view = await createChat();
    await say(view.chat.id, 'user', 'Python or JavaScript?');
    await say(view.chat.id, 'assistant', 'What do you like?');
    const checkpoint = await call('POST', `/api/chats/${view.chat.id}/checkpoints`, {
      name: 'choice',
    });
    expect(checkpoint.status).toBe(201);
    expect(
      checkpoint.body.view.graph.checkpoints.map((item: { name: string }) => item.name),
    ).toEqual(['choice']);
    const taken = await call('POST', `/api/chats/${view.chat.id}/checkpoints`, { name: 'choice' });
    expect(taken.status).toBe(409);
    expect(taken.body.error.name).toBe('CheckpointExistsError');
    await say(view.chat.id, 'user', 'Python');
    const restored = await call('POST', `/api/chats/${view.chat.id}/restore`, { name: 'choice' });
    expect(restored.status).toBe(200);
    expect(restored.body.view.branch).toBe('main-v2');
    expect(restored.body.view.messages).toHaveLength(2);
    const unknown = await call('POST', `/api/chats/${view.chat.id}/restore`, { name: 'nowhere' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.name).toBe('CheckpointNotFoundError');
  });

  it('checkpoints any message of the chat by id, and refuses one that is not in it', async () => {
    const view = await createChat();
    const first = await say(view.chat.id, 'user', 'Python or JavaScript?');
    await say(view.chat.id, 'assistant', 'What do you like?');
    const firstId = first.headMessageId as string;
    const named = await call('POST', `/api/chats/${view.chat.id}/checkpoints`, {
      name: 'question',
      messageId: firstId,
    });
    expect(named.status).toBe(201);
    expect(named.body.result.messageId).toBe(firstId);
    // Nothing moved: the branch and its head are where they were.
    expect(named.body.view.branch).toBe('main');
    expect(named.body.view.messages).toHaveLength(2);
    const elsewhere = await createChat('Another');
    const foreign = await say(elsewhere.chat.id, 'user', 'Hello');
    const refused = await call('POST', `/api/chats/${view.chat.id}/checkpoints`, {
      name: 'stolen',
      messageId: foreign.headMessageId,
    });
    expect(refused.status).toBe(404);
    expect(refused.body.error.name).toBe('MessageNotFoundError');
    const after = await call('GET', `/api/chats/${view.chat.id}`);
    expect(after.body.graph.checkpoints.map((item: { name: string }) => item.name)).toEqual([
      'question',
    ]);
  });

  it('opens a btw branch without leaving the current one, and switches branches', async () => {
    const view = await createChat();
    await say(view.chat.id, 'user', 'Weather?');
    const btw = await call('POST', `/api/chats/${view.chat.id}/btw`, {});
    expect(btw.status).toBe(200);
    expect(btw.body.result.name).toBe('main-v2');
    expect(btw.body.view.branch).toBe('main');
    const switched = await call('POST', `/api/chats/${view.chat.id}/switch`, { branch: 'main-v2' });
    expect(switched.status).toBe(200);
    expect(switched.body.view.branch).toBe('main-v2');
    // The active branch is kept by the store, so the next request still sees it.
    expect((await call('GET', `/api/chats/${view.chat.id}`)).body.branch).toBe('main-v2');
    const unknown = await call('POST', `/api/chats/${view.chat.id}/switch`, { branch: 'nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.name).toBe('BranchNotFoundError');
    const missing = await call('POST', `/api/chats/${view.chat.id}/switch`, {});
    expect(missing.status).toBe(400);
  });

  it('inspects a chat: tokens, cost, lanes and graph', async () => {
    const view = await createChat();
    await call('PUT', `/api/chats/${view.chat.id}/context`, { fragments: richContext });
    await say(view.chat.id, 'user', 'Hello there');
    const reply = await call(
      'GET',
      `/api/chats/${view.chat.id}/inspect?renderer=markdown&modelId=gpt-4o`,
    );
    expect(reply.status).toBe(200);
    expect(reply.body.estimate.tokens).toBeGreaterThan(10);
    expect(reply.body.estimate.modelId).toBe('gpt-4o');
    expect(reply.body.fragments.context).toHaveLength(3);
    expect(reply.body.fragments.persisted).toHaveLength(1);
    expect(reply.body.graph.nodes).toHaveLength(1);
    expect(reply.body.meta.chatId).toBe(view.chat.id);
    // Without a model configured nor asked for, the estimate is for the default model.
    const plain = await call('GET', `/api/chats/${view.chat.id}/inspect`);
    expect(plain.body.estimate.modelId).toBe('gpt-4o-mini');
    expect(plain.body.estimate.cost).toBeGreaterThan(0);
    const bad = await call('GET', `/api/chats/${view.chat.id}/inspect?renderer=html`);
    expect(bad.status).toBe(400);
  });
});

describe('budget and cache', () => {
  it('shows the figures a fresh engine computes: the budget plan after a smaller call, and the estimate', async () => {
    const view = await createChat();
    const chatId = view.chat.id;
    await call('PUT', `/api/chats/${chatId}/context`, { fragments: richContext });
    for (let turn = 1; turn <= 5; turn += 1) {
      await say(chatId, 'user', `Question ${turn} about the weekly figures?`);
      await say(chatId, 'assistant', `Answer ${turn}: they rose by ${turn} percent.`);
    }
    // A small budgeted call first (the warm engine remembers its plan), then a bigger budget.
    const roomy = await call('GET', `/api/chats/${chatId}/inspect?maxInputTokens=100000`);
    const small = Math.floor((roomy.body.budget.totalTokens as number) * 0.5);
    await call('POST', `/api/chats/${chatId}/budgeted-call`, { maxInputTokens: small });
    const shown = await call('GET', `/api/chats/${chatId}/inspect?maxInputTokens=100000`);

    const fresh = new ContextEngine({
      store: backend.store,
      chatId,
      userId: 'demo-user',
      renderer: rendererFor('xml'),
      tokenizer: o200kTokenizer,
    });
    await fresh.loadContext();
    const expected = await fresh.inspect({
      modelId: 'gpt-4o-mini',
      renderer: rendererFor('xml'),
      budget: { maxInputTokens: 100000 },
    });
    // The bigger budget keeps everything again: the earlier small cut is not carried over.
    expect(shown.body.budget.leftOut).toEqual([]);
    const plan = expected.budget;
    if (plan === undefined || plan === null || 'exceeded' in plan)
      throw new Error('the fresh plan did not fit');
    expect(shown.body.budget.totalTokens).toBe(plan.totalTokens);
    expect(shown.body.budget.messages).toEqual(JSON.parse(JSON.stringify(plan.messages)));
    expect(shown.body.estimate.tokens).toBe(expected.estimate.tokens);
    expect(shown.body.usage).toEqual(JSON.parse(JSON.stringify(expected.usage)));
  });

  it('gives the Inspect and Budget windows the same token figures, those of a fresh engine', async () => {
    const view = await createChat();
    const chatId = view.chat.id;
    await call('PUT', `/api/chats/${chatId}/context`, { fragments: richContext });
    for (let turn = 1; turn <= 3; turn += 1) {
      await say(chatId, 'user', `Question ${turn} about the weekly figures?`);
      await say(chatId, 'assistant', `Answer ${turn}: they rose by ${turn} percent.`);
    }
    // What each window asks for: Inspect without a budget, Budget with the page's (4,000).
    const inspectWindow = await call('GET', `/api/chats/${chatId}/inspect?renderer=markdown`);
    const budgetWindow = await call(
      'GET',
      `/api/chats/${chatId}/inspect?renderer=markdown&maxInputTokens=4000`,
    );
    expect(inspectWindow.status).toBe(200);
    expect(budgetWindow.status).toBe(200);
    const inspected = inspectWindow.body.budget;
    const budgeted = budgetWindow.body.budget;
    expect(budgeted.leftOut).toEqual([]);
    expect(inspected.leftOut).toEqual([]);
    expect(inspected.totalTokens).toBe(budgeted.totalTokens);
    expect(inspected.systemPromptTokens).toBe(budgeted.systemPromptTokens);
    expect(inspected.messages).toEqual(budgeted.messages);
    expect(inspected.messages).toHaveLength(6);
    // The figures add up: the total is the system prompt and the messages.
    const messageTokens = (inspected.messages as Array<{ tokens: number }>).reduce(
      (total, message) => total + message.tokens,
      0,
    );
    expect(inspected.totalTokens).toBe(inspected.systemPromptTokens + messageTokens);
    // The engine's text-only estimate is smaller (it leaves out each message's framing): the
    // reason the windows used to disagree.
    expect(inspectWindow.body.estimate.tokens).toBeLessThan(inspected.totalTokens);

    const fresh = new ContextEngine({
      store: backend.store,
      chatId,
      userId: 'demo-user',
      renderer: rendererFor('xml'),
      tokenizer: o200kTokenizer,
    });
    await fresh.loadContext();
    const expected = await fresh.inspect({
      modelId: 'gpt-4o-mini',
      renderer: rendererFor('markdown'),
      budget: { maxInputTokens: 10_000_000 },
    });
    const plan = expected.budget;
    if (plan === undefined || plan === null || 'exceeded' in plan)
      throw new Error('the fresh plan did not fit');
    expect(inspected.totalTokens).toBe(plan.totalTokens);
    expect(inspected.systemPromptTokens).toBe(plan.systemPromptTokens);
    expect(inspected.messages).toEqual(JSON.parse(JSON.stringify(plan.messages)));
    expect(inspectWindow.body.nextCall).toEqual(JSON.parse(JSON.stringify(expected.nextCall)));
  });

  it('estimates the next call with the cache profile of the model asked about, as both windows show it', async () => {
    const view = await createChat();
    const chatId = view.chat.id;
    await call('PUT', `/api/chats/${chatId}/context`, { fragments: richContext });
    for (let turn = 1; turn <= 3; turn += 1) {
      await say(chatId, 'user', `Question ${turn} about the weekly figures?`);
      await say(chatId, 'assistant', `Answer ${turn}: they rose by ${turn} percent.`);
    }
    // The call the Cache tab records (for the page's model, gpt-4o-mini by default), then a
    // new message: the next call repeats the recorded call's input as its prefix.
    const recorded = await call('POST', `/api/chats/${chatId}/budgeted-call`, {
      maxInputTokens: 4000,
    });
    expect(recorded.body.modelId).toBe('gpt-4o-mini');
    expect(recorded.body.budget.cache.profile).toBe('openai');
    await say(chatId, 'user', 'And the monthly ones?');
    const asked = `/api/chats/${chatId}/inspect?renderer=xml&modelId=gpt-4o-mini&maxInputTokens=4000`;
    const snapshot = await call('GET', asked);
    expect(snapshot.status).toBe(200);
    const plan = snapshot.body.budget;
    // OpenAI's rules, not Anthropic's: a prefix under 1,024 tokens is not read from the cache.
    expect(plan.cache.profile).toBe('openai');
    expect(plan.prefix.reusedTokens).toBeGreaterThan(0);
    expect(plan.cache.readTokens).toBe(0);
    expect(snapshot.body.nextCall).toEqual({
      profile: 'openai',
      modelId: 'gpt-4o-mini',
      cachedTokens: 0,
      writtenTokens: 0,
      uncachedTokens: plan.totalTokens,
      cost: (plan.totalTokens * 0.15) / 1e6,
    });
    // A fresh engine computes the same estimate from the same plan.
    const fresh = new ContextEngine({
      store: backend.store,
      chatId,
      userId: 'demo-user',
      renderer: rendererFor('xml'),
      tokenizer: o200kTokenizer,
    });
    await fresh.loadContext();
    const expected = await fresh.inspect({
      modelId: 'gpt-4o-mini',
      budget: { maxInputTokens: 4000 },
    });
    expect(snapshot.body.nextCall).toEqual(JSON.parse(JSON.stringify(expected.nextCall)));
    // Claude's profile for a Claude model.
    const claude = await call(
      'GET',
      `/api/chats/${chatId}/inspect?modelId=claude-sonnet-4&maxInputTokens=4000`,
    );
    expect(claude.body.budget.cache.profile).toBe('anthropic');
    expect(claude.body.nextCall.profile).toBe('anthropic');
  });

  it('plans within a budget without remembering, and reports what a budgeted call reused', async () => {
    const view = await createChat();
    const chatId = view.chat.id;
    await call('PUT', `/api/chats/${chatId}/context`, { fragments: richContext });
    for (let turn = 1; turn <= 6; turn += 1) {
      await say(chatId, 'user', `Question number ${turn} about the quarterly revenue figures?`);
      await say(chatId, 'assistant', `Answer number ${turn}: revenue grew by ${turn} percent.`);
    }
    const roomy = await call('GET', `/api/chats/${chatId}/inspect?maxInputTokens=100000`);
    expect(roomy.status).toBe(200);
    expect(roomy.body.budget.leftOut).toEqual([]);
    expect(roomy.body.budget.messages).toHaveLength(12);
    const total = roomy.body.budget.totalTokens as number;
    const tight = await call(
      'GET',
      `/api/chats/${chatId}/inspect?maxInputTokens=${Math.floor(total * 0.6)}`,
    );
    expect(
      tight.body.budget.leftOut.some((item: { kind: string }) => item.kind === 'history'),
    ).toBe(true);
    expect(tight.body.budget.totalTokens).toBeLessThanOrEqual(Math.floor(total * 0.6));
    const bad = await call('GET', `/api/chats/${chatId}/inspect?maxInputTokens=-3`);
    expect(bad.status).toBe(400);

    const first = await call('POST', `/api/chats/${chatId}/budgeted-call`, {
      maxInputTokens: 100000,
    });
    expect(first.status).toBe(200);
    expect(first.body.budget.prefix.compared).toBe(false);
    await say(chatId, 'user', 'One more question?');
    const second = await call('POST', `/api/chats/${chatId}/budgeted-call`, {
      maxInputTokens: 100000,
    });
    expect(second.body.budget.prefix.compared).toBe(true);
    expect(second.body.budget.prefix.firstChange).toBeNull();
    expect(second.body.budget.prefix.reusedTokens).toBeGreaterThan(total * 0.8);
    // A changed fragment breaks the prefix there.
    await call('PUT', `/api/chats/${chatId}/context`, {
      fragments: [{ type: 'role', text: 'You are a terse assistant.' }, ...richContext.slice(1)],
    });
    const third = await call('POST', `/api/chats/${chatId}/budgeted-call`, {
      maxInputTokens: 100000,
    });
    expect(third.body.budget.prefix.firstChange).toMatchObject({ kind: 'fragment' });
    const refused = await call('POST', `/api/chats/${chatId}/budgeted-call`, {
      maxInputTokens: 0,
    });
    expect(refused.status).toBe(400);
  });
});

describe('branch tools', () => {
  /** A chat with main (question, answer A, follow-up) and main-v2 (question, answer B). */
  async function forked(): Promise<{ chatId: string; questionId: string }> {
    const view = await createChat();
    const chatId = view.chat.id;
    const asked = await say(chatId, 'user', 'Which database for analytics?');
    await say(chatId, 'assistant', 'PostgreSQL with a columnar extension.');
    await say(chatId, 'user', 'And for caching?');
    const questionId = asked.headMessageId as string;
    await call('POST', `/api/chats/${chatId}/rewind`, { messageId: questionId });
    await say(chatId, 'assistant', 'DuckDB, embedded in the app.');
    await call('POST', `/api/chats/${chatId}/switch`, { branch: 'main' });
    return { chatId, questionId };
  }

  it('compares two branches from their common ancestor, with tokens and usage per side', async () => {
    const { chatId, questionId } = await forked();
    const reply = await call('GET', `/api/chats/${chatId}/compare?left=main&right=main-v2`);
    expect(reply.status).toBe(200);
    expect(reply.body.commonAncestor.id).toBe(questionId);
    expect(reply.body.left.messages).toHaveLength(2);
    expect(reply.body.right.messages).toHaveLength(1);
    expect(reply.body.right.tokens).toBeGreaterThan(0);
    // Written by hand: no model call recorded, so nothing spent.
    expect(reply.body.right.usage.calls).toBe(0);
    expect(reply.body.right.cost).toBeNull();
    const unknown = await call('GET', `/api/chats/${chatId}/compare?left=main&right=nope`);
    expect(unknown.status).toBe(404);
    const missing = await call('GET', `/api/chats/${chatId}/compare?left=main`);
    expect(missing.status).toBe(400);
  });

  it('searches the active branch or the whole chat', async () => {
    const { chatId } = await forked();
    const onBranch = await call('GET', `/api/chats/${chatId}/search?q=DuckDB`);
    expect(onBranch.status).toBe(200);
    expect(onBranch.body.items).toEqual([]);
    const inChat = await call('GET', `/api/chats/${chatId}/search?q=DuckDB&scope=chat`);
    expect(inChat.body.items).toHaveLength(1);
    expect(inChat.body.items[0].branches).toEqual(['main-v2']);
    const empty = await call('GET', `/api/chats/${chatId}/search?q=%20`);
    expect(empty.status).toBe(400);
    const wrongScope = await call('GET', `/api/chats/${chatId}/search?q=x&scope=user`);
    expect(wrongScope.status).toBe(400);
  });

  it('searches as you type: the last word matches as a prefix, unless asked for whole words', async () => {
    const { chatId } = await forked();
    const prefix = await call('GET', `/api/chats/${chatId}/search?q=Duck&scope=chat`);
    expect(prefix.status).toBe(200);
    expect(prefix.body.items).toHaveLength(1);
    expect(prefix.body.items[0].snippet).toContain('DuckDB');
    const analytics = await call('GET', `/api/chats/${chatId}/search?q=database%20anal`);
    expect(analytics.body.items).toHaveLength(1);
    const words = await call('GET', `/api/chats/${chatId}/search?q=Duck&scope=chat&match=words`);
    expect(words.body.items).toEqual([]);
    const badMatch = await call('GET', `/api/chats/${chatId}/search?q=Duck&match=regex`);
    expect(badMatch.status).toBe(400);
  });

  it('renames a branch: the view follows, a taken or unknown name is refused', async () => {
    const { chatId } = await forked();
    await call('POST', `/api/chats/${chatId}/switch`, { branch: 'main-v2' });
    const renamed = await call('POST', `/api/chats/${chatId}/rename-branch`, {
      from: 'main-v2',
      to: 'duckdb',
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.result).toMatchObject({ name: 'duckdb' });
    expect(renamed.body.view.branch).toBe('duckdb');
    expect(renamed.body.view.graph.branches.map((branch: { name: string }) => branch.name)).toEqual(
      ['main', 'duckdb'],
    );
    const taken = await call('POST', `/api/chats/${chatId}/rename-branch`, {
      from: 'duckdb',
      to: 'main',
    });
    expect(taken.status).toBe(409);
    const unknown = await call('POST', `/api/chats/${chatId}/rename-branch`, {
      from: 'nope',
      to: 'x',
    });
    expect(unknown.status).toBe(404);
    const empty = await call('POST', `/api/chats/${chatId}/rename-branch`, {
      from: 'duckdb',
      to: ' ',
    });
    expect(empty.status).toBe(400);
    const same = await call('POST', `/api/chats/${chatId}/rename-branch`, {
      from: 'duckdb',
      to: 'duckdb',
    });
    expect(same.status).toBe(400);
    // A fresh look at the chat agrees.
    const fresh = await call('GET', `/api/chats/${chatId}`);
    expect(fresh.body.branch ?? fresh.body.view?.branch).toBe('duckdb');
  });

  it('previews a branch deletion without changing anything, then deletes it', async () => {
    const { chatId } = await forked();
    const preview = await call('POST', `/api/chats/${chatId}/delete-branch`, {
      branch: 'main-v2',
      dryRun: true,
    });
    expect(preview.status).toBe(200);
    expect(preview.body.result).toMatchObject({ dryRun: true, nodes: 1, branches: ['main-v2'] });
    expect(preview.body.view.graph.branches).toHaveLength(2);
    const deleted = await call('POST', `/api/chats/${chatId}/delete-branch`, {
      branch: 'main-v2',
    });
    expect(deleted.body.result).toMatchObject({ dryRun: false, nodes: 1 });
    expect(deleted.body.view.graph.branches.map((branch: { name: string }) => branch.name)).toEqual(
      ['main'],
    );
    expect(deleted.body.view.graph.nodes).toHaveLength(3);
    // The active branch goes only with another one named to take its place.
    const active = await call('POST', `/api/chats/${chatId}/delete-branch`, { branch: 'main' });
    expect(active.status).toBe(400);
    expect((await call('GET', `/api/chats/${chatId}`)).body.graph.nodes).toHaveLength(3);
  });
});

describe('compaction', () => {
  it('compacts with a summary written by hand, drawn as a compaction node', async () => {
    const view = await createChat();
    const chatId = view.chat.id;
    for (let turn = 1; turn <= 4; turn += 1) {
      await say(chatId, 'user', `Question ${turn}`);
      await say(chatId, 'assistant', `Answer ${turn}`);
    }
    const none = await call('POST', `/api/chats/${chatId}/compact`, { keepTurns: 1 });
    expect(none.status).toBe(400);
    expect(none.body.error.message).toContain('write it yourself');
    const empty = await call('POST', `/api/chats/${chatId}/compact`, { summary: '  ' });
    expect(empty.status).toBe(400);
    const reply = await call('POST', `/api/chats/${chatId}/compact`, {
      keepTurns: 1,
      summary: 'Three questions were asked and answered.',
    });
    expect(reply.status).toBe(200);
    expect(reply.body.result.compaction.coveredMessages).toBe(6);
    const node = reply.body.view.graph.nodes.find(
      (item: { compaction: unknown }) => item.compaction !== null,
    );
    expect(node.compaction).toMatchObject({ coveredMessages: 6, previousCompactionId: null });
    expect(node.id).toBe(reply.body.view.headMessageId);
    // What the model receives: the summary, then the turn kept.
    expect(reply.body.view.messages).toHaveLength(3);
    expect(JSON.stringify(reply.body.view.messages[0])).toContain('Three questions');
    // Nothing older to compact past the turn kept: nothing written.
    const again = await call('POST', `/api/chats/${chatId}/compact`, {
      keepTurns: 5,
      summary: 'x',
    });
    expect(again.status).toBe(200);
    expect(again.body.result).toBeNull();
  });
});

describe('compaction with a model', () => {
  it('lets the built-in summarizer write the summary when no summary is given', async () => {
    const model = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'Four questions about numbers, all answered.' }],
        finishReason: { unified: 'stop', raw: undefined },
        usage: {
          inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 5, text: 5, reasoning: undefined },
        },
        warnings: [],
      }),
    });
    const withModel = createPlaygroundApp({
      store: backend.store,
      storeDescription: backend.description,
      model: { modelId: 'mock-model', apiKey: 'test', baseURL: undefined },
      languageModel: model,
      defaultUserId: 'demo-user',
      logError: (_message, error) => logged.push(error),
    });
    const view = await createChat();
    for (let turn = 1; turn <= 3; turn += 1) {
      await say(view.chat.id, 'user', `Question ${turn}`);
      await say(view.chat.id, 'assistant', `Answer ${turn}`);
    }
    const reply = await call(
      'POST',
      `/api/chats/${view.chat.id}/compact`,
      { keepTurns: 1 },
      { target: withModel },
    );
    expect(reply.status).toBe(200);
    expect(reply.body.result.compaction.coveredMessages).toBe(4);
    expect(JSON.stringify(reply.body.view.messages[0])).toContain('Four questions about numbers');
    expect(model.doGenerateCalls).toHaveLength(1);
  });
});

describe('model replies', () => {
  it('says no model is configured', async () => {
    const view = await createChat();
    const reply = await call('POST', `/api/chats/${view.chat.id}/reply`, { text: 'Hi' });
    expect(reply.status).toBe(400);
    expect(reply.body.error.message).toContain('OPENAI_API_KEY');
  });

  it('streams a reply from an OpenAI-compatible server and saves both messages', async () => {
    const fake = await startFakeOpenAI(['Hello', ', ', 'world']);
    try {
      const target = build({ modelId: 'fake-model', apiKey: 'test', baseURL: fake.baseURL });
      const view = await createChat();
      await call('PUT', `/api/chats/${view.chat.id}/context`, { fragments: richContext });
      const response = await target.request(`/api/chats/${view.chat.id}/reply`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Greet me', renderer: 'markdown' }),
      });
      expect(response.status).toBe(200);
      const lines = (await response.text())
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(
        lines
          .filter((line) => line.type === 'delta')
          .map((line) => line.text)
          .join(''),
      ).toBe('Hello, world');
      const done = lines.at(-1);
      expect(done.type).toBe('done');
      // What changed, not the whole chat: the question and the reply.
      expect(
        done.change.added.map((each: { message: { role: string } }) => each.message.role),
      ).toEqual(['user', 'assistant']);
      const request = fake.requests[0] as {
        model: string;
        messages: Array<{ role: string; content: unknown }>;
      };
      expect(request.model).toBe('fake-model');
      expect(request.messages[0]?.role).toBe('system');
      expect(String(request.messages[0]?.content)).toContain('PostgreSQL 16');

      // The reply's usage is recorded: a fresh engine on the same store counts the call.
      const fresh = new ContextEngine({
        store: backend.store,
        chatId: view.chat.id,
        userId: 'demo-user',
      });
      const usage = await fresh.usage();
      expect(usage.calls).toBe(1);
      expect(usage.inputTokens).toBe(FAKE_USAGE.promptTokens);
      expect(usage.outputTokens).toBe(FAKE_USAGE.completionTokens);
      expect(usage.cacheReadTokens).toBe(FAKE_USAGE.cachedTokens);
      expect(Object.keys(usage.byModel)).toEqual(['fake-model']);
      // And the inspect view of the page shows the same call.
      const inspected = await target.request(
        `/api/chats/${view.chat.id}/inspect?renderer=markdown&modelId=fake-model`,
      );
      const snapshot = await inspected.json();
      expect(JSON.stringify(snapshot)).toContain('"calls":1');
    } finally {
      await fake.close();
    }
  });

  it('reports a failing model in the stream and keeps the user message', async () => {
    const fake = await startFakeOpenAI([], true);
    try {
      const target = build({ modelId: 'fake-model', apiKey: 'test', baseURL: fake.baseURL });
      const view = await createChat();
      const response = await target.request(`/api/chats/${view.chat.id}/reply`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'Anyone there?' }),
      });
      const lines = (await response.text())
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.at(-1)).toMatchObject({
        type: 'error',
        message: expect.stringContaining('The model reply failed'),
      });
      const after = await call('GET', `/api/chats/${view.chat.id}`);
      expect(after.body.messages.map((message: { role: string }) => message.role)).toEqual([
        'user',
      ]);
      expect(logged.length).toBeGreaterThan(0);
    } finally {
      await fake.close();
    }
  });
});
