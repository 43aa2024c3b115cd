import {
  type AppendResult,
  BranchNotFoundError,
  ChatNotFoundError,
  type ContextStore,
  type MessageNodeRecord,
  type StoredMessage,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  badIdentifiers,
  expectRefused,
  expectRejection,
  messageOfDepth,
  openFreshChat,
  type StoreHarness,
  snapshot,
  textEntries,
  textMessage,
  uniqueId,
} from './store-harness';

/**
 * `append` (every store has it, the kit's default over `commit` included): the write of `commit` attached at whatever
 * the head is when the store takes it, appenders serialized by the store.
 */
export function defineAppendTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  describe('append', () => {
    it(
      'attaches at the current head, returns it as previousHeadId, moves the head and bumps the revision by one',
      async () => {
        const store = harness.store();
        const { chatId, opened } = await openFreshChat(store);
        const [a, b, c, d] = [uniqueId('a'), uniqueId('b'), uniqueId('c'), uniqueId('d')];
        const first = await store.append({
          chatId,
          branch: 'main',
          messages: [
            { id: a, message: textMessage(a, 'hello') },
            { id: b, message: textMessage(b, 'hi', 'assistant') },
          ],
        });
        expect(first).toMatchObject({
          previousHeadId: null,
          headMessageId: b,
          revision: opened.chat.revision + 1,
          rewrittenAt: 0,
        });
        expect(first.nodes.map((node) => [node.chatId, node.id, node.parentId])).toEqual([
          [chatId, a, null],
          [chatId, b, a],
        ]);
        expect(first.nodes[1]?.message).toEqual(textMessage(b, 'hi', 'assistant'));
        for (const node of first.nodes)
          expect(await store.getMessage({ chatId, messageId: node.id })).toEqual(node);
        // A commit in between: the next append attaches at the head that commit left.
        await appendMessages(store, chatId, [c]);
        const second = await store.append({
          chatId,
          branch: 'main',
          messages: textEntries([d]),
        });
        expect(second).toMatchObject({
          previousHeadId: c,
          headMessageId: d,
          revision: first.revision + 2,
        });
        expect(second.nodes[0]).toMatchObject({ id: d, parentId: c });
        expect((second.nodes[0] as MessageNodeRecord).sequence).toBeGreaterThan(
          (first.nodes[1] as MessageNodeRecord).sequence,
        );
        expect(await store.getHead({ chatId, branch: 'main' })).toEqual({
          revision: second.revision,
          headMessageId: d,
          rewrittenAt: 0,
        });
        expect((await store.getChat(chatId))?.revision).toBe(second.revision);
        const chain = await store.getChain({ chatId, headMessageId: d });
        expect(chain.nodes.map((node) => node.id)).toEqual([a, b, c, d]);
        // Another branch: attached at its own head, main left where it was.
        await store.createBranch({ chatId, name: 'side', headMessageId: a });
        const s = uniqueId('s');
        const onSide = await store.append({
          chatId,
          branch: 'side',
          messages: textEntries([s]),
        });
        expect(onSide).toMatchObject({ previousHeadId: a, headMessageId: s });
        expect(onSide.nodes[0]?.parentId).toBe(a);
        expect((await store.getBranch({ chatId, name: 'side' }))?.headMessageId).toBe(s);
        expect((await store.getBranch({ chatId, name: 'main' }))?.headMessageId).toBe(d);
        // An empty branch takes a root.
        await store.createBranch({ chatId, name: 'blank', headMessageId: null });
        const r = uniqueId('r');
        const rooted = await store.append({
          chatId,
          branch: 'blank',
          messages: textEntries([r]),
        });
        expect(rooted).toMatchObject({ previousHeadId: null, headMessageId: r });
        expect(rooted.nodes[0]?.parentId).toBeNull();
      },
      timeout,
    );

    it(
      'replaces ids on the branch in place and chains only the new ones',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [a, b, x, y] = [uniqueId('a'), uniqueId('b'), uniqueId('x'), uniqueId('y')];
        await appendMessages(store, chatId, [a, b]);
        const before = (await store.getMessage({ chatId, messageId: a })) as MessageNodeRecord;
        const mixed = await store.append({
          chatId,
          branch: 'main',
          messages: [
            { id: x, message: textMessage(x, 'new one') },
            { id: a, message: textMessage(a, 'rewritten first') },
            { id: y, message: textMessage(y, 'new two') },
          ],
        });
        expect(mixed.previousHeadId).toBe(b);
        expect(mixed.headMessageId).toBe(y);
        expect(mixed.rewrittenAt).toBe(mixed.revision);
        expect(mixed.nodes.map((node) => [node.id, node.parentId])).toEqual([
          [x, b],
          [a, null],
          [y, x],
        ]);
        expect(mixed.nodes[1]).toMatchObject({
          sequence: before.sequence,
          createdAt: before.createdAt,
        });
        const chain = await store.getChain({ chatId, headMessageId: y });
        expect(chain.nodes.map((node) => node.id)).toEqual([a, b, x, y]);
        expect(chain.nodes[0]?.message).toEqual(textMessage(a, 'rewritten first'));
        // Only replacements: the head stays, and previousHeadId is that head.
        const only = await store.append({
          chatId,
          branch: 'main',
          messages: [{ id: y, message: textMessage(y, 'new two, corrected') }],
        });
        expect(only).toMatchObject({
          previousHeadId: y,
          headMessageId: y,
          revision: mixed.revision + 1,
          rewrittenAt: mixed.revision + 1,
        });
        expect((await store.getGraph(chatId)).nodes).toHaveLength(4);
      },
      timeout,
    );

    it(
      'an unknown branch or chat throws BranchNotFoundError / ChatNotFoundError and writes nothing',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        await appendMessages(store, chatId, [uniqueId('m')]);
        const before = await snapshot(store, chatId);
        const unknown = uniqueId('unknown');
        const id = uniqueId('m');
        const missingBranch = await expectRejection(
          () => store.append({ chatId, branch: unknown, messages: textEntries([id]) }),
          BranchNotFoundError,
        );
        expect(missingBranch).toMatchObject({ chatId, branch: unknown });
        const absentChat = uniqueId('chat');
        const missingChat = await expectRejection(
          () => store.append({ chatId: absentChat, branch: 'main', messages: textEntries([id]) }),
          ChatNotFoundError,
        );
        expect(missingChat).toMatchObject({ chatId: absentChat });
        expect(await store.getChat(absentChat)).toBeNull();
        expect(await snapshot(store, chatId)).toEqual(before);
        expect(await store.getMessage({ chatId, messageId: id })).toBeNull();
      },
      timeout,
    );

    it(
      'refuses bad input with ValidationError naming the field, and changes nothing',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [first, head] = [uniqueId('m'), uniqueId('m')];
        await appendMessages(store, chatId, [first, head]);
        await store.createBranch({ chatId, name: 'side', headMessageId: first });
        const id = uniqueId('m');
        const append =
          (messages: unknown, input: object = {}) =>
          () =>
            store.append({ chatId, branch: 'main', messages: messages as never, ...input });
        const good = textEntries([id]);
        for (const [what, bad] of badIdentifiers) {
          await expectRefused(
            store,
            chatId,
            `chatId ${what}`,
            'chatId',
            append(good, { chatId: bad }),
          );
          await expectRefused(
            store,
            chatId,
            `branch ${what}`,
            'branch',
            append(good, { branch: bad }),
          );
        }
        await expectRefused(store, chatId, 'input null', 'input', () =>
          store.append(null as never),
        );
        await expectRefused(store, chatId, 'empty messages', 'messages', append([]));
        await expectRefused(
          store,
          chatId,
          'messages not an array',
          'messages',
          append({ 0: good[0] }),
        );
        await expectRefused(
          store,
          chatId,
          'id differs from message.id',
          'id',
          // A node id may differ from its message id; the message id is still an id.
          append([{ id, message: textMessage('') }]),
        );
        await expectRefused(store, chatId, 'an id twice', 'id', append([...good, ...good]));
        await expectRefused(
          store,
          chatId,
          'no role',
          'role',
          append([{ id, message: { id, parts: [] } }]),
        );
        const nan = uniqueId('m');
        await expectRefused(
          store,
          chatId,
          'good then NaN',
          'messages[1]',
          append([
            ...good,
            {
              id: nan,
              message: { id: nan, role: 'user', parts: [{ type: 'x', data: Number.NaN }] },
            },
          ]),
        );
        await expectRefused(
          store,
          chatId,
          'too deep',
          'messages[0]',
          append([{ id, message: messageOfDepth(id, 129) as StoredMessage }]),
        );
        // Replacing an existing node with bad content leaves the old content.
        await expectRefused(
          store,
          chatId,
          'replace with NaN',
          'messages[0]',
          append([
            {
              id: head,
              message: { id: head, role: 'user', parts: [{ type: 'x', data: Number.NaN }] },
            },
          ]),
        );
      },
      timeout,
    );

    it(
      '8 appenders × 10 batches of 2 on one branch through one store: none fails, nothing lost, every head move accounted for',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const base = await appendMessages(store, chatId, [uniqueId('base')]);
        const runs = await runAppenders([store], chatId, 8, 10);
        await expectSerializedAppends(store, chatId, base.headMessageId, base.revision, runs);
      },
      slowTimeout,
    );

    it(
      '8 appenders × 10 batches of 2 spread over two store objects on the same data: the same guarantees',
      async ({ skip }) => {
        const store = harness.store();
        if (!store.capabilities.multiProcess)
          skip('the store does not declare capabilities.multiProcess');
        if (harness.options.reopenStore === undefined) skip('no reopenStore was given');
        await harness.withReopened(store, async (reopened) => {
          const { chatId } = await openFreshChat(store);
          const start = await store.getHead({ chatId, branch: 'main' });
          const runs = await runAppenders([store, reopened], chatId, 8, 10);
          await expectSerializedAppends(reopened, chatId, null, start.revision, runs);
        });
      },
      slowTimeout,
    );
  });
}

/** What one appender did: its batches (two ids each) in its own order, and what each append returned. */
interface AppenderRun {
  readonly batches: readonly (readonly [string, string])[];
  readonly results: readonly AppendResult[];
}

/**
 * `appenders` callers, spread over `stores`, each append `batches` batches of two messages (one
 * after the other), all callers at once. Any failure fails the test.
 */
async function runAppenders(
  stores: readonly ContextStore[],
  chatId: string,
  appenders: number,
  batches: number,
): Promise<AppenderRun[]> {
  return Promise.all(
    Array.from({ length: appenders }, async (_, appender) => {
      const store = stores[appender % stores.length] as ContextStore;
      const done: (readonly [string, string])[] = [];
      const results: AppendResult[] = [];
      for (let batch = 0; batch < batches; batch += 1) {
        const ids = [
          uniqueId(`p${appender}b${batch}u`),
          uniqueId(`p${appender}b${batch}a`),
        ] as const;
        const messages = ids.map((id, index) => ({
          id,
          message: textMessage(
            id,
            `appender ${appender} batch ${batch}`,
            index === 0 ? 'user' : 'assistant',
          ),
        }));
        results.push(await store.append({ chatId, branch: 'main', messages }));
        done.push(ids);
      }
      return { batches: done, results };
    }),
  );
}

/**
 * Appends were serialized: each returned the head it attached to and the head it left, and those
 * link into ONE line from `start` to the branch head (no two appends attached at the same head,
 * none skipped); versions rise by one per append along that line; the chain holds every message
 * once, each batch's two messages adjacent, each appender's batches in its order.
 */
async function expectSerializedAppends(
  store: ContextStore,
  chatId: string,
  start: string | null,
  startRevision: number,
  runs: readonly AppenderRun[],
): Promise<void> {
  const all = runs.flatMap((run) =>
    run.results.map((result, index) => ({
      result,
      batch: run.batches[index] as readonly [string, string],
    })),
  );
  const total = all.length;
  for (const { result, batch } of all) {
    expect(result.headMessageId).toBe(batch[1]);
    expect(result.nodes.map((node) => [node.id, node.parentId])).toEqual([
      [batch[0], result.previousHeadId],
      [batch[1], batch[0]],
    ]);
  }
  const byPrevious = new Map(all.map(({ result }) => [result.previousHeadId, result]));
  expect(byPrevious.size, 'two appends attached at the same head').toBe(total);
  let cursor = start;
  let revision = startRevision;
  for (let step = 0; step < total; step += 1) {
    const next = byPrevious.get(cursor);
    if (next === undefined) expect.fail(`no append attached at ${String(cursor)} (step ${step})`);
    revision += 1;
    expect(next.revision, `the append after ${String(cursor)}`).toBe(revision);
    cursor = next.headMessageId;
  }
  const head = await store.getHead({ chatId, branch: 'main' });
  expect(head.headMessageId).toBe(cursor);
  expect(head.revision).toBe(startRevision + total);
  const chain = await store.getChain({
    chatId,
    headMessageId: cursor as string,
    ...(start === null ? {} : { until: start }),
  });
  const ids = chain.nodes.map((node) => node.id);
  expect(ids).toHaveLength(total * 2);
  expect(new Set(ids).size).toBe(total * 2);
  expect(chain.nodes[0]?.parentId).toBe(start);
  for (let index = 1; index < chain.nodes.length; index += 1)
    expect(chain.nodes[index]?.parentId).toBe(chain.nodes[index - 1]?.id);
  const position = new Map(ids.map((id, index) => [id, index]));
  for (const run of runs) {
    let previous = -1;
    for (const [user, assistant] of run.batches) {
      const at = position.get(user) as number;
      expect(at).toBeGreaterThan(previous);
      expect(position.get(assistant)).toBe(at + 1);
      previous = at + 1;
    }
  }
  expect((await store.getGraph(chatId)).nodes).toHaveLength(total * 2 + (start === null ? 0 : 1));
}
