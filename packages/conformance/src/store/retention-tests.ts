import {
  BranchNotFoundError,
  ChatNotFoundError,
  type ContextStore,
  HeadConflictError,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  expectRefused,
  expectRejection,
  missingCapability,
  openFreshChat,
  pruneIn,
  readWholeChain,
  type StoreHarness,
  searchIn,
  sequentialIds,
  snapshot,
  textMessage,
  uniqueId,
} from './store-harness';

/** UTF-8 bytes of the stored JSON of these nodes, as the store reports them. */
async function bytesOf(
  store: ContextStore,
  chatId: string,
  ids: readonly string[],
): Promise<number> {
  const encoder = new TextEncoder();
  let bytes = 0;
  for (const id of ids) {
    const node = await store.getMessage({ chatId, messageId: id });
    if (node === null) expect.fail(`node ${id} is missing`);
    bytes += encoder.encode(JSON.stringify(node.message)).length;
  }
  return bytes;
}

async function nodeIds(store: ContextStore, chatId: string): Promise<string[]> {
  return (await store.getGraph(chatId)).nodes.map((node) => node.id);
}

/**
 * A chat with main a-b-c, `left` forked at b with d-e, `right` forked at a with f-g, and a
 * checkpoint `keep` at g.
 */
async function forkedChat(store: ContextStore) {
  const fresh = await openFreshChat(store);
  const { chatId } = fresh;
  const [a, b, c, d, e, f, g] = sequentialIds(uniqueId('r'), 7) as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  await appendMessages(store, chatId, [a, b, c]);
  await store.createBranch({ chatId, name: 'left', headMessageId: b });
  await appendMessages(store, chatId, [d, e], 'left');
  await store.createBranch({ chatId, name: 'right', headMessageId: a });
  await appendMessages(store, chatId, [f, g], 'right');
  await store.createCheckpoint({ chatId, name: 'keep', messageId: g });
  return { ...fresh, a, b, c, d, e, f, g };
}

/**
 * `prune` (when `capabilities.retention` is declared): deleting branches and the nodes nothing
 * reaches any more, never one a branch head or a checkpoint reaches; the dry run; the active
 * branch rule; bad input; and writers saving while a prune runs.
 */
export function defineRetentionTests(harness: StoreHarness): void {
  const { timeout, slowTimeout } = harness;

  describe('retention (prune)', () => {
    it(
      'deletes a branch and only the nodes no other branch or checkpoint reaches',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'retention');
        if (reason !== undefined) skip(reason);
        const chat = await forkedChat(store);
        const { chatId, a, b, c, d, e, f, g } = chat;
        const before = await store.getChat(chatId);
        // The checkpoint still reaches f and g: deleting `right` removes no node.
        expect(await pruneIn(store, { chatId, deleteBranches: ['right'] })).toEqual({
          chatId,
          dryRun: false,
          nodes: 0,
          bytes: 0,
          branches: ['right'],
          activeBranch: 'main',
        });
        expect((await store.listBranches(chatId)).map((branch) => branch.name)).toEqual([
          'main',
          'left',
        ]);
        expect(await nodeIds(store, chatId)).toEqual([a, b, c, d, e, f, g]);
        // Without the checkpoint nothing reaches them.
        await store.deleteCheckpoint({ chatId, name: 'keep' });
        const bytes = await bytesOf(store, chatId, [f, g]);
        expect(await pruneIn(store, { chatId })).toEqual({
          chatId,
          dryRun: false,
          nodes: 2,
          bytes,
          branches: [],
          activeBranch: 'main',
        });
        expect(await nodeIds(store, chatId)).toEqual([a, b, c, d, e]);
        // b is shared with main: deleting `left` removes d and e only.
        expect(await pruneIn(store, { chatId, deleteBranches: ['left'] })).toMatchObject({
          nodes: 2,
          branches: ['left'],
        });
        expect(await nodeIds(store, chatId)).toEqual([a, b, c]);
        expect((await readWholeChain(store, chatId, c)).ids).toEqual([a, b, c]);
        // No branch's chain changed: the revision stays.
        expect((await store.getChat(chatId))?.revision).toBe(before?.revision);
        expect(await store.getMessage({ chatId, messageId: d })).toBeNull();
        // Nothing left to remove.
        expect(await pruneIn(store, { chatId })).toMatchObject({ nodes: 0, bytes: 0 });
      },
      timeout,
    );

    it(
      'reports with dryRun exactly what would go, and changes nothing',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'retention');
        if (reason !== undefined) skip(reason);
        const { chatId, d, e, f, g } = await forkedChat(store);
        await store.deleteCheckpoint({ chatId, name: 'keep' });
        const before = await snapshot(store, chatId);
        const bytes = await bytesOf(store, chatId, [d, e, f, g]);
        const input = { chatId, deleteBranches: ['left', 'right'] };
        const report = await pruneIn(store, { ...input, dryRun: true });
        expect(report).toEqual({
          chatId,
          dryRun: true,
          nodes: 4,
          bytes,
          branches: ['left', 'right'],
          activeBranch: 'main',
        });
        expect(await snapshot(store, chatId)).toEqual(before);
        expect(await pruneIn(store, input)).toEqual({ ...report, dryRun: false });
      },
      timeout,
    );

    it(
      'deletes the active branch only when told which becomes active',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'retention');
        if (reason !== undefined) skip(reason);
        const { chatId, c } = await forkedChat(store);
        await store.setActiveBranch({ chatId, name: 'left' });
        await expectRefused(store, chatId, 'active branch without activate', 'activate', () =>
          pruneIn(store, { chatId, deleteBranches: ['left'] }),
        );
        await expectRefused(store, chatId, 'every branch', 'deleteBranches', () =>
          pruneIn(store, {
            chatId,
            deleteBranches: ['main', 'left', 'right'],
            activate: 'elsewhere',
          }),
        );
        await expectRefused(
          store,
          chatId,
          'activate while the active branch stays',
          'activate',
          () => pruneIn(store, { chatId, deleteBranches: ['right'], activate: 'main' }),
        );
        const before = await snapshot(store, chatId);
        await expectRejection(
          () => pruneIn(store, { chatId, deleteBranches: ['left'], activate: 'nowhere' }),
          BranchNotFoundError,
        );
        await expectRejection(
          () => pruneIn(store, { chatId, deleteBranches: ['no-such-branch'] }),
          BranchNotFoundError,
        );
        expect(await snapshot(store, chatId)).toEqual(before);
        const result = await pruneIn(store, {
          chatId,
          deleteBranches: ['left'],
          activate: 'main',
        });
        expect(result).toMatchObject({ branches: ['left'], activeBranch: 'main', nodes: 2 });
        expect((await store.getChat(chatId))?.activeBranch).toBe('main');
        expect((await store.getHead({ chatId, branch: 'main' })).headMessageId).toBe(c);
      },
      timeout,
    );

    it(
      'refuses bad input with a ValidationError naming the field, and an unknown chat',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'retention');
        if (reason !== undefined) skip(reason);
        const { chatId } = await forkedChat(store);
        const refusals: [string, Record<string, unknown>, string][] = [
          ['deleteBranches not an array', { chatId, deleteBranches: 'left' }, 'deleteBranches'],
          ['an empty branch name', { chatId, deleteBranches: [''] }, 'deleteBranches[0]'],
          ['a name twice', { chatId, deleteBranches: ['left', 'left'] }, 'deleteBranches[1]'],
          [
            'activate among the deleted',
            { chatId, deleteBranches: ['left'], activate: 'left' },
            'activate',
          ],
          ['dryRun not a boolean', { chatId, dryRun: 'yes' }, 'dryRun'],
          ['no chat id', {}, 'chatId'],
        ];
        for (const [label, input, field] of refusals) {
          await expectRefused(store, chatId, label, field, () => pruneIn(store, input as never));
        }
        await expectRejection(
          () => pruneIn(store, { chatId: uniqueId('missing') }),
          ChatNotFoundError,
        );
      },
      timeout,
    );

    it(
      'removes pruned messages, and those of a deleted chat, from search results',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'retention') ?? missingCapability(store, 'search');
        if (reason !== undefined) skip(reason);
        const { chatId, userId } = await openFreshChat(store);
        const [kept, gone] = [uniqueId('kept'), uniqueId('gone')];
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [{ id: kept, message: textMessage(kept, 'the pangolin stays') }],
        });
        await store.createBranch({ chatId, name: 'doomed', headMessageId: kept });
        await store.commit({
          chatId,
          branch: 'doomed',
          expectedHeadId: kept,
          messages: [{ id: gone, message: textMessage(gone, 'the pangolin goes') }],
        });
        expect((await searchIn(store, { userId, query: 'pangolin' })).items).toHaveLength(2);
        await pruneIn(store, { chatId, deleteBranches: ['doomed'] });
        const after = await searchIn(store, { userId, query: 'pangolin' });
        expect(after.items.map((hit) => hit.messageId)).toEqual([kept]);
        expect(after.items[0]?.branches).toEqual(['main']);
        // A deleted chat takes its messages out of search too.
        await store.deleteChat(chatId);
        expect((await searchIn(store, { userId, query: 'pangolin' })).items).toEqual([]);
      },
      timeout,
    );

    it(
      'never removes a reachable node or loses a turn while writers save to the chat',
      async ({ skip }) => {
        const store = harness.store();
        const reason = missingCapability(store, 'retention');
        if (reason !== undefined) skip(reason);
        const { chatId } = await openFreshChat(store);
        const prefix = uniqueId('cw');
        const [root] = sequentialIds(`${prefix}-root`, 1) as [string];
        await appendMessages(store, chatId, [root]);
        // Six forks of 20 nodes each, deleted (with their nodes) while the writers save.
        const dead: string[] = [];
        for (let fork = 0; fork < 6; fork += 1) {
          const name = `dead-${fork}`;
          await store.createBranch({ chatId, name, headMessageId: root });
          const ids = sequentialIds(`${prefix}-dead-${fork}`, 20);
          await appendMessages(store, chatId, ids, name);
          dead.push(...ids);
        }
        await store.createBranch({ chatId, name: 'side', headMessageId: root });
        const writers = 4;
        const turns = 8;
        const saved: string[][] = Array.from({ length: writers }, () => []);
        const write = async (writer: number): Promise<void> => {
          const branch = writer % 2 === 0 ? 'main' : 'side';
          for (let turn = 0; turn < turns; turn += 1) {
            const id = `${prefix}-w${writer}-t${turn}`;
            for (let attempt = 0; ; attempt += 1) {
              const head = await store.getHead({ chatId, branch });
              try {
                await store.commit({
                  chatId,
                  branch,
                  expectedHeadId: head.headMessageId,
                  messages: [{ id, message: textMessage(id) }],
                });
                break;
              } catch (error) {
                if (!HeadConflictError.isInstance(error) || attempt > 200) throw error;
              }
            }
            saved[writer]?.push(id);
          }
        };
        const prunes = async (): Promise<number> => {
          let removed = 0;
          for (let fork = 0; fork < 6; fork += 1) {
            const result = await pruneIn(store, { chatId, deleteBranches: [`dead-${fork}`] });
            removed += result.nodes;
            await new Promise((resolve) => setTimeout(resolve, 1));
          }
          return removed;
        };
        // A writer on the last branch to be deleted: each of its turns either lands before the
        // deletion (and goes with the branch) or is refused with BranchNotFoundError; never a
        // node left without its parent.
        const late: string[] = [];
        const writeDoomed = async (): Promise<void> => {
          for (let turn = 0; turn < turns; turn += 1) {
            const id = `${prefix}-doomed-t${turn}`;
            try {
              const head = await store.getHead({ chatId, branch: 'dead-5' });
              await store.commit({
                chatId,
                branch: 'dead-5',
                expectedHeadId: head.headMessageId,
                messages: [{ id, message: textMessage(id) }],
              });
              late.push(id);
            } catch (error) {
              if (BranchNotFoundError.isInstance(error)) return;
              throw error;
            }
          }
        };
        const [removed] = await Promise.all([
          prunes(),
          writeDoomed(),
          ...Array.from({ length: writers }, (_, writer) => write(writer)),
        ]);
        expect(removed).toBe(dead.length + late.length);
        const mainChain = (
          await readWholeChain(
            store,
            chatId,
            (
              await store.getHead({ chatId, branch: 'main' })
            ).headMessageId as string,
          )
        ).ids;
        const sideChain = (
          await readWholeChain(
            store,
            chatId,
            (
              await store.getHead({ chatId, branch: 'side' })
            ).headMessageId as string,
          )
        ).ids;
        for (let writer = 0; writer < writers; writer += 1) {
          const chain = writer % 2 === 0 ? mainChain : sideChain;
          for (const id of saved[writer] ?? []) expect(chain, `turn ${id}`).toContain(id);
        }
        expect(mainChain).toHaveLength(1 + (writers / 2) * turns);
        expect(sideChain).toHaveLength(1 + (writers / 2) * turns);
        const graph = await store.getGraph(chatId);
        const remaining = new Set(graph.nodes.map((node) => node.id));
        for (const id of [...dead, ...late]) expect(remaining.has(id), `pruned ${id}`).toBe(false);
        expect(remaining.size).toBe(1 + writers * turns);
        for (const node of graph.nodes) {
          if (node.parentId !== null) expect(remaining.has(node.parentId), node.id).toBe(true);
        }
      },
      slowTimeout,
    );
  });
}
