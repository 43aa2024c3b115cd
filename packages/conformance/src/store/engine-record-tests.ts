import {
  type CommitMessage,
  type ContextStore,
  type EngineRecord,
  type MessageNodeRecord,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  expectRejection,
  openFreshChat,
  type StoreHarness,
  snapshot,
  textMessage,
  uniqueId,
} from './store-harness';

/** A record with what must survive: key order, unicode, nesting, numbers, null. */
function recordOf(label: string): EngineRecord {
  return {
    usage: { modelId: `model-${label}`, inputTokens: 1_200, cacheReadTokens: null, z: 1, a: 2 },
    compaction: {
      version: 1,
      boundaryId: 'b',
      note: 'Zoë — “quoted” 🚀\t<ok/>',
      list: [true, 2.5],
    },
  };
}

function entry(id: string, engineRecord?: EngineRecord): CommitMessage {
  const message = {
    ...textMessage(id, `text of ${id}`, 'assistant'),
    metadata: { app: { kept: true } },
  };
  return engineRecord === undefined ? { id, message } : { id, message, engineRecord };
}

/** The node holds the message as written and the record beside it, byte for byte. */
function expectNode(node: MessageNodeRecord | null | undefined, written: CommitMessage): void {
  expect(node?.id).toBe(written.id);
  expect(JSON.stringify(node?.message)).toBe(JSON.stringify(written.message));
  expect(JSON.stringify(node?.engineRecord ?? null)).toBe(
    JSON.stringify(written.engineRecord ?? null),
  );
}

/** Every read of the chat gives the nodes' records back. */
async function expectEveryRead(
  store: ContextStore,
  chatId: string,
  head: string,
  written: readonly CommitMessage[],
): Promise<void> {
  for (const each of written)
    expectNode(await store.getMessage({ chatId, messageId: each.id }), each);
  const chain = await store.getChain({ chatId, headMessageId: head });
  const graph = await store.getGraph(chatId);
  for (const each of written) {
    expectNode(
      chain.nodes.find((node) => node.id === each.id),
      each,
    );
    expectNode(
      graph.nodes.find((node) => node.id === each.id),
      each,
    );
  }
}

/** A write's returned nodes and every later read hold what was written, record included. */
async function expectWritten(
  store: ContextStore,
  chatId: string,
  returned: readonly MessageNodeRecord[],
  head: string,
  written: readonly CommitMessage[],
): Promise<void> {
  returned.forEach((node, index) => {
    expectNode(node, written[index] as CommitMessage);
  });
  await expectEveryRead(store, chatId, head, written);
}

/**
 * Engine records (every store keeps them): the engine's own record of a node, given as
 * `CommitMessage.engineRecord`, kept beside the message byte for byte and returned by every read;
 * replacing a node in place replaces its record when one is given and keeps it otherwise; the
 * message never holds it.
 */
export function defineEngineRecordTests(harness: StoreHarness): void {
  const { timeout } = harness;

  describe('engine records', () => {
    it(
      'commit keeps each record beside its message, byte for byte, in every read',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const written = [
          entry(uniqueId('m'), recordOf('a')),
          entry(uniqueId('m')),
          entry(uniqueId('m'), { usage: { modelId: 'm' } }),
        ];
        const result = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: written,
        });
        await expectWritten(store, chatId, result.nodes, written.at(-1)?.id as string, written);
      },
      timeout,
    );

    it(
      'append keeps the record too',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const written = [entry(uniqueId('m')), entry(uniqueId('m'), recordOf('b'))];
        const result = await store.append({ chatId, branch: 'main', messages: written });
        await expectWritten(store, chatId, result.nodes, written.at(-1)?.id as string, written);
      },
      timeout,
    );

    it(
      'replacing a node in place replaces its record with the one given, and keeps it when none is',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const [first, second] = [uniqueId('m'), uniqueId('m')];
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [entry(first, recordOf('old')), entry(second, recordOf('old'))],
        });
        const replaced = [entry(first, recordOf('new')), entry(second)];
        const result = await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: second,
          messages: replaced,
        });
        expect(result.headMessageId).toBe(second);
        const expected = [replaced[0] as CommitMessage, entry(second, recordOf('old'))];
        await expectWritten(store, chatId, result.nodes, second, expected);
        // A message that looks like a record inside is only a message: the record beside it stays.
        const lookalike: CommitMessage = {
          id: first,
          message: { ...textMessage(first), metadata: { ctxgraph: { usage: { modelId: 'x' } } } },
        };
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: second,
          messages: [lookalike],
        });
        expectNode(await store.getMessage({ chatId, messageId: first }), {
          ...lookalike,
          engineRecord: recordOf('new'),
        });
        // An empty record is a record like any other (how a writer clears one).
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: second,
          messages: [{ ...lookalike, engineRecord: {} }],
        });
        expectNode(await store.getMessage({ chatId, messageId: first }), {
          ...lookalike,
          engineRecord: {},
        });
      },
      timeout,
    );

    it(
      'a record that is not a JSON object, or not storable, is refused, writing nothing',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const before = await snapshot(store, chatId);
        for (const engineRecord of [[1], 'text', { text: 'half \uDE00' }, { n: Number.NaN }]) {
          const error = await expectRejection(
            () =>
              store.commit({
                chatId,
                branch: 'main',
                expectedHeadId: null,
                messages: [entry(uniqueId('m'), engineRecord as unknown as EngineRecord)],
              }),
            ValidationError,
          );
          expect(error.message).toMatch(/engineRecord/);
        }
        expect(await snapshot(store, chatId)).toEqual(before);
      },
      timeout,
    );

    it(
      'records survive closing the store and opening it again',
      async ({ skip }) => {
        if (!harness.store().capabilities.persistent || harness.options.reopenStore === undefined)
          skip('the store does not declare capabilities.persistent (or no reopenStore)');
        await harness.withOwnStore(async (store) => {
          const { chatId } = await openFreshChat(store);
          const written = [entry(uniqueId('m'), recordOf('kept')), entry(uniqueId('m'))];
          await store.commit({ chatId, branch: 'main', expectedHeadId: null, messages: written });
          await store.close();
          await harness.withReopened(store, async (reopened) => {
            await expectEveryRead(reopened, chatId, written.at(-1)?.id as string, written);
          });
        });
      },
      timeout,
    );
  });
}
