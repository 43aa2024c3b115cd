// The placement (AttachedChat.place), case by case: each row is a chat as stored, a request as the
// cycle reads it, and where the request attaches (the conversation the reply continues, and what
// was written: nothing, the branch extended, a new branch, a new root, a reply continued in
// place), or the refusal and that nothing was written. On a real store (memory and a SQLite file).
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { message } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { type ContextStore, MessageNotFoundError, ValidationError } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { SqliteContextStore } from '@ctxgraph/store-sqlite';
import type { UIMessage } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { ChatRequestError } from '../errors';
import { readChatRequest } from '../request/read-chat-request';
import { STOPPED_REASON, settleReply } from '../stream/settle-reply';
import { AttachedChat } from './attach';
import { settleClientMessages } from './client-copies';
import { ContinuationRefusedError } from './continuation-refused-error';

const renderer = new XmlRenderer();
const ask = (id: string, text: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text }],
});
const answer = (id: string, text: string): UIMessage => ({
  id,
  role: 'assistant',
  parts: [{ type: 'text', text, state: 'done' }],
});
const q1 = ask('q1', 'one');
const a1 = answer('a1', 'One.');
const q2 = ask('q2', 'two');
const a2 = answer('a2', 'Two.');
const q3 = ask('q3', 'three');
/** A reply that called the client-side tool `confirm` and waits for its result. */
const waiting: UIMessage = {
  id: 'a2',
  role: 'assistant',
  parts: [
    { type: 'step-start' },
    {
      type: 'tool-confirm',
      toolCallId: 'call-1',
      state: 'input-available',
      input: { question: 'ok?' },
    },
  ],
} as UIMessage;
const answered = {
  ...waiting,
  parts: [
    { type: 'step-start' },
    {
      type: 'tool-confirm',
      toolCallId: 'call-1',
      state: 'output-available',
      input: { question: 'ok?' },
      output: 'yes',
    },
  ],
} as UIMessage;
/** The client's copy of a reply stopped after a word (the AI SDK keeps it streaming). */
const stoppedCopy: UIMessage = {
  id: 'a2',
  role: 'assistant',
  parts: [{ type: 'step-start' }, { type: 'text', text: 'Partial ', state: 'streaming' }],
};

/** The chats a row starts from, on the branch `main` (none: the chat does not exist yet). */
const histories = {
  none: [],
  'q1 a1 q2 a2': [q1, a1, q2, a2],
  'q1 a1 q2, a2 waiting for a tool result': [q1, a1, q2, waiting],
  'q1 a1 q2, a2 stopped and stored settled': [
    q1,
    a1,
    q2,
    settleReply(stoppedCopy, STOPPED_REASON) as UIMessage,
  ],
} satisfies Record<string, UIMessage[]>;

/** Where a request attaches, as the graph shows it after `place()`. */
type Written =
  /** Nothing written: the engine is positioned at a stored message. */
  | 'nothing'
  /** The new messages extend the branch `main` (its head was where they attach). */
  | 'main extended'
  /** A new branch at the node the request continues from; `main` unchanged. */
  | 'new branch'
  /** A new branch starting at a new root. */
  | 'new root'
  /** The reply the request continues is saved in place (no new node). */
  | 'in place';

interface Placed {
  /** The conversation the reply continues (message ids), `originalMessages`. */
  readonly path: string[];
  readonly written: Written;
  /** The reply continued in place (a tool result, an approval). */
  readonly continues?: string;
  /** A message id and how many versions of it the chat holds after. */
  readonly versions?: readonly [string, number];
}

interface Refused {
  readonly refused: (error: unknown) => boolean;
  readonly message: RegExp;
}

interface Row {
  readonly name: string;
  readonly history: keyof typeof histories;
  /** The body as the transport posts it (without `id`). */
  readonly body: Record<string, unknown>;
  /** `begin(…, { after })`: a message id of this chat (its node), of `other`, or a raw value. */
  readonly after?: { of: 'this' | 'other'; messageId: string } | string | null;
  readonly expected: Placed | Refused;
  /** The store calls a warm engine's placement makes, when the row pins them down. */
  readonly warmCalls?: readonly string[];
}

const rows: Row[] = [
  {
    name: 'a new chat, all messages: its first message',
    history: 'none',
    body: { messages: [q1] },
    expected: { path: ['q1'], written: 'main extended' },
  },
  {
    name: 'a new chat, the last message only: its first message',
    history: 'none',
    body: { message: q1 },
    expected: { path: ['q1'], written: 'main extended' },
  },
  {
    name: "after the head: the client's path and a new question extend the branch",
    history: 'q1 a1 q2 a2',
    body: { messages: [q1, a1, q2, a2, q3] },
    expected: { path: ['q1', 'a1', 'q2', 'a2', 'q3'], written: 'main extended' },
    // The engine's own path settles where the request goes: the one write, nothing read.
    warmCalls: ['commit'],
  },
  {
    name: 'after a node that is not a head: a new branch there',
    history: 'q1 a1 q2 a2',
    body: { messages: [q1, a1, q3] },
    expected: { path: ['q1', 'a1', 'q3'], written: 'new branch' },
  },
  {
    name: 'the last message only: after the most recently written message',
    history: 'q1 a1 q2 a2',
    body: { message: q3 },
    expected: { path: ['q1', 'a1', 'q2', 'a2', 'q3'], written: 'main extended' },
  },
  {
    name: 'the last message only, after a head (begin’s `after`): the branch extended',
    history: 'q1 a1 q2 a2',
    body: { message: q3 },
    after: { of: 'this', messageId: 'a2' },
    expected: { path: ['q1', 'a1', 'q2', 'a2', 'q3'], written: 'main extended' },
  },
  {
    name: 'the last message only, after a node that is not a head: a new branch there',
    history: 'q1 a1 q2 a2',
    body: { message: q3 },
    after: { of: 'this', messageId: 'a1' },
    expected: { path: ['q1', 'a1', 'q3'], written: 'new branch' },
  },
  {
    name: 'the last message only, after null: a new root',
    history: 'q1 a1 q2 a2',
    body: { message: q3 },
    after: null,
    expected: { path: ['q3'], written: 'new root' },
  },
  {
    name: 'after a node the chat does not hold: refused, nothing written',
    history: 'q1 a1 q2 a2',
    body: { message: q3 },
    after: 'no-such-node',
    expected: {
      refused: (error) => MessageNotFoundError.isInstance(error),
      message: /no-such-node/,
    },
  },
  {
    name: 'after a node of another chat: refused, nothing written',
    history: 'q1 a1 q2 a2',
    body: { message: q3 },
    after: { of: 'other', messageId: 'x1' },
    expected: {
      refused: (error) => MessageNotFoundError.isInstance(error),
      message: /not found|does not/i,
    },
  },
  {
    name: 'after something that is not an id: refused, nothing written',
    history: 'q1 a1 q2 a2',
    body: { message: q3 },
    after: 'bad\u0000id',
    expected: {
      refused: (error) => ValidationError.isInstance(error),
      message: /NUL|identifier|id/i,
    },
  },
  {
    name: 'an edit (all messages): a new version of the message at its parent',
    history: 'q1 a1 q2 a2',
    body: { messages: [q1, a1, ask('q2', 'two, edited')] },
    expected: { path: ['q1', 'a1', 'q2'], written: 'new branch', versions: ['q2', 2] },
  },
  {
    name: 'an edit (the last message only): a new version at its parent',
    history: 'q1 a1 q2 a2',
    body: { message: ask('q2', 'two, edited') },
    expected: { path: ['q1', 'a1', 'q2'], written: 'new branch', versions: ['q2', 2] },
  },
  {
    name: 'the stored message sent again (the last message only): continues from it',
    history: 'q1 a1 q2 a2',
    body: { message: q2 },
    expected: { path: ['q1', 'a1', 'q2'], written: 'nothing', versions: ['q2', 1] },
  },
  {
    name: 'regenerate (all messages): positioned at the question, nothing written',
    history: 'q1 a1 q2 a2',
    body: { trigger: 'regenerate-message', messageId: 'a2', messages: [q1, a1, q2] },
    expected: { path: ['q1', 'a1', 'q2'], written: 'nothing' },
  },
  {
    name: 'regenerate (the last message only): positioned at the question, nothing written',
    history: 'q1 a1 q2 a2',
    body: { trigger: 'regenerate-message', messageId: 'a2', message: q2 },
    expected: { path: ['q1', 'a1', 'q2'], written: 'nothing' },
  },
  {
    name: 'a continuation (all messages): the answer saved onto the waiting reply, in place',
    history: 'q1 a1 q2, a2 waiting for a tool result',
    body: { messageId: 'a2', messages: [q1, a1, q2, answered] },
    expected: { path: ['q1', 'a1', 'q2', 'a2'], written: 'in place', continues: 'a2' },
  },
  {
    name: 'a continuation (the last message only): in place',
    history: 'q1 a1 q2, a2 waiting for a tool result',
    body: { messageId: 'a2', message: answered },
    expected: { path: ['q1', 'a1', 'q2', 'a2'], written: 'in place', continues: 'a2' },
  },
  {
    name: 'a continuation of a reply that waits for nothing: refused',
    history: 'q1 a1 q2 a2',
    body: { messageId: 'a2', messages: [q1, a1, q2, answer('a2', 'Two, continued.')] },
    expected: {
      refused: (error) => ContinuationRefusedError.isInstance(error),
      message: /waits for no tool/,
    },
  },
  {
    name: 'a continuation of a reply the chat does not hold: refused',
    history: 'q1 a1 q2 a2',
    body: { messageId: 'a9', message: answer('a9', 'Made up.') },
    expected: {
      refused: (error) => ContinuationRefusedError.isInstance(error),
      message: /holds no reply 'a9'/,
    },
  },
  {
    name: "a user's stored question sent back as a reply: refused",
    history: 'q1 a1 q2 a2',
    body: { messageId: 'q2', messages: [q1, a1, { ...q2, role: 'assistant' }] },
    expected: {
      refused: (error) => ContinuationRefusedError.isInstance(error),
      message: /not a reply/,
    },
  },
  {
    name: "a stored reply sent back as the user's (an edit keeps its role): refused",
    history: 'q1 a1 q2 a2',
    body: { messages: [q1, { ...a1, role: 'user' }] },
    expected: {
      refused: (error) => ChatRequestError.isInstance(error),
      message: /keeps its message's role/,
    },
  },
  {
    name: "the client's unsettled copy of a stopped reply is the stored reply, not an edit",
    history: 'q1 a1 q2, a2 stopped and stored settled',
    body: { messages: [q1, a1, q2, stoppedCopy, q3] },
    expected: {
      path: ['q1', 'a1', 'q2', 'a2', 'q3'],
      written: 'main extended',
      versions: ['a2', 1],
    },
  },
];

const cleanup: (() => void | Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanup) await step();
});

const stores: [string, () => ContextStore][] = [
  ['memory', () => new InMemoryContextStore()],
  [
    'SQLite file',
    () => {
      const path = join(tmpdir(), `ctxgraph-attach-${Math.random().toString(36).slice(2)}.db`);
      const store = new SqliteContextStore({ path });
      cleanup.push(async () => {
        await store.close();
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
      });
      return store;
    },
  ],
];

/** `store`, with the name of each call it serves pushed onto `calls`. */
function countCalls(store: ContextStore, calls: string[]): ContextStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(String(property));
        return (value as (...parameters: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/** The graph as far as placement changes it: nodes (with messages) and branch heads. */
async function graphOf(store: ContextStore, chatId: string) {
  if ((await store.getChat(chatId)) === null) return { nodes: [], branches: [], checkpoints: [] };
  const graph = await store.getGraph(chatId);
  return JSON.parse(
    JSON.stringify({
      nodes: graph.nodes.map(({ id, parentId, message: stored }) => ({ id, parentId, stored })),
      branches: (await store.listBranches(chatId)).map(({ name, headMessageId }) => ({
        name,
        headMessageId,
      })),
      checkpoints: await store.listCheckpoints(chatId),
    }),
  ) as {
    nodes: { id: string; parentId: string | null; stored: UIMessage }[];
    branches: { name: string; headMessageId: string | null }[];
    checkpoints: unknown[];
  };
}

async function nodeOf(store: ContextStore, chatId: string, messageId: string): Promise<string> {
  const engine = new ContextEngine({ store, chatId, userId: 'u' });
  const [node] = await engine.findMessage(messageId);
  if (node === undefined) throw new Error(`fixture: no ${messageId} in ${chatId}`);
  return node;
}

let counter = 0;

/**
 * Each row is placed by a new engine (`cold`), and again (`warm`, rows with a history) by the
 * engine that wrote the history, at its newest node, given the chat as the request read it
 * (`useSnapshot`), as the cycle's warm engines are: both must place it alike.
 */
const engineKinds = ['cold', 'warm'] as const;

describe.each(
  stores.flatMap(([name, open]) => engineKinds.map((kind) => [name, kind, open] as const)),
)('placement on %s, %s engine', (_name, kind, open) => {
  const store = open();

  it.each(rows.filter((row) => kind === 'cold' || histories[row.history].length > 0))(
    '$name',
    async (row) => {
      counter += 1;
      const chatId = `attach-${counter}`;
      const history = histories[row.history];
      const calls: string[] = [];
      const attached = new AttachedChat(countCalls(store, calls), chatId, 'u', { renderer });
      if (history.length > 0) {
        const engine =
          kind === 'warm' ? attached.engine : new ContextEngine({ store, chatId, userId: 'u' });
        // A warm engine stands where its own last write left it, as after a turn of the cycle.
        if (kind === 'warm') await engine.continueFrom(null, { activate: false });
        engine.set(...history.map((each) => message(each)));
        await engine.save();
      }
      const otherId = `${chatId}-other`;
      const other = new ContextEngine({ store, chatId: otherId, userId: 'u' });
      other.set(message(ask('x1', 'elsewhere')));
      await other.save();
      let after: string | null | undefined;
      if (row.after === undefined || row.after === null || typeof row.after === 'string')
        after = row.after;
      else
        after = await nodeOf(
          store,
          row.after.of === 'this' ? chatId : otherId,
          row.after.messageId,
        );

      // What `begin()` hands the placement: the body read, the client's cut-off copies settled.
      const sent = await readChatRequest({ id: chatId, ...row.body }, {}, 'shape');
      const request = { ...sent, messages: settleClientMessages(sent.messages) };
      const before = await graphOf(store, chatId);
      if (kind === 'warm') attached.engine.useSnapshot(await store.getChat(chatId));
      calls.length = 0;
      const placing = attached.place(
        request,
        (from) => Promise.resolve(request.messages.slice(from)),
        after,
        { replyId: 'reply-1', owner: 'writer', leaseMs: 10_000, keep: false },
      );
      const graphAfter = async () => graphOf(store, chatId);

      const expected = row.expected;
      if ('refused' in expected) {
        const error = await placing.then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(expected.refused(error), String(error)).toBe(true);
        expect((error as Error).message).toMatch(expected.message);
        expect(await graphAfter()).toEqual(before);
        return;
      }
      const placed = await placing;
      if (kind === 'warm' && row.warmCalls !== undefined) expect(calls).toEqual(row.warmCalls);
      expect(placed.path.map((each) => each.id)).toEqual(expected.path);
      expect(placed.continues?.id).toBe(expected.continues);
      const now = await graphAfter();
      const added = now.nodes.filter((node) => !before.nodes.some((old) => old.id === node.id));
      // A new chat's `main` is made with its first message: that extends it, it is no new branch.
      const newBranches = now.branches.filter(
        (branch) =>
          branch.name !== 'main' && !before.branches.some((old) => old.name === branch.name),
      );
      const mainBefore = before.branches.find((branch) => branch.name === 'main')?.headMessageId;
      const mainNow = now.branches.find((branch) => branch.name === 'main')?.headMessageId;
      const lastNode = added.at(-1);
      const written: Written =
        added.length === 0
          ? JSON.stringify(now) === JSON.stringify(before)
            ? 'nothing'
            : 'in place'
          : newBranches.length === 0
            ? 'main extended'
            : added[0]?.parentId === null
              ? 'new root'
              : 'new branch';
      expect(written).toBe(expected.written);
      if (written === 'main extended') expect(mainNow).toBe(lastNode?.id);
      if (written === 'new branch' || written === 'new root') {
        expect(mainNow).toBe(mainBefore);
        expect(newBranches.map((branch) => branch.headMessageId)).toEqual([lastNode?.id]);
      }
      if (written === 'in place') {
        const continued = now.nodes.find((node) => node.stored.id === expected.continues);
        expect(continued?.stored.parts).toEqual(answered.parts);
        expect(now.checkpoints).toEqual([]);
      }
      // The new messages are the request's, attached after the path's previous message.
      if (lastNode !== undefined) {
        expect(lastNode.stored.id).toBe(expected.path.at(-1));
        const previous = expected.path.at(-2);
        expect(
          lastNode.parentId === null
            ? undefined
            : now.nodes.find((node) => node.id === lastNode.parentId)?.stored.id,
        ).toBe(previous);
      }
      if (expected.versions !== undefined) {
        const [messageId, count] = expected.versions;
        expect(now.nodes.filter((node) => node.stored.id === messageId)).toHaveLength(count);
      }
    },
  );
});
