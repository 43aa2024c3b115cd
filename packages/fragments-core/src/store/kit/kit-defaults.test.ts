import { describe, expect, it } from 'vitest';
import {
  BranchExistsError,
  ChatNotFoundError,
  HeadConflictError,
  MessageIdConflictError,
  StoreError,
} from '../../errors/errors';
import type { BranchRecord, MessageNodeRecord } from '../records';
import { branch, message, stubDriver } from './__fixtures__/stub-driver';
import { CheckedContextStore } from './checked-context-store';
import type { PreparedCommit } from './commit-input';
import type { PreparedCreateBranch } from './pointer-input';

// The kit's `append` and `forkBranch` for a driver that serves neither: built from the driver's
// required methods, retrying what a concurrent writer took, bounded, and never hiding a refusal
// that is not a conflict. (The conformance kit runs a whole store on them: the README's Map store.)

const conflict = (currentHeadId: string | null) =>
  new HeadConflictError({ chatId: 'c', branch: 'main', expectedHeadId: null, currentHeadId });

describe('the kit default of append', () => {
  it('commits at the head it reads, and again at the head each conflict names', async () => {
    const expected: (string | null)[] = [];
    const heads = ['h2', 'h3'];
    let headReads = 0;
    const { driver } = stubDriver({
      getHead: () => {
        headReads += 1;
        return { revision: 4, headMessageId: 'h1', rewrittenAt: 0 };
      },
      commit: (input: PreparedCommit) => {
        expected.push(input.expectedHeadId);
        const next = heads.shift();
        if (next !== undefined) throw conflict(next);
        return { headMessageId: 'm', revision: 5, rewrittenAt: 0, nodes: [] };
      },
    });
    const store = new CheckedContextStore(driver);
    const result = await store.append({ chatId: 'c', branch: 'main', messages: [message('m')] });
    expect(result).toEqual({
      headMessageId: 'm',
      revision: 5,
      rewrittenAt: 0,
      nodes: [],
      previousHeadId: 'h3',
    });
    expect(expected).toEqual(['h1', 'h2', 'h3']);
    // One read of the head: each conflict names the next one.
    expect(headReads).toBe(1);
  });

  it('passes on a refusal that is not a conflict, and gives up after 100 conflicts with nothing written', async () => {
    const refusal = new MessageIdConflictError({ chatId: 'c', branch: 'main', messageId: 'm' });
    const refused = new CheckedContextStore(
      stubDriver({
        commit: () => {
          throw refusal;
        },
      }).driver,
    );
    await expect(
      refused.append({ chatId: 'c', branch: 'main', messages: [message('m')] }),
    ).rejects.toBe(refusal);
    let attempts = 0;
    const contended = new CheckedContextStore(
      stubDriver({
        commit: () => {
          attempts += 1;
          throw conflict(`h${attempts}`);
        },
      }).driver,
    );
    const error = await contended
      .append({ chatId: 'c', branch: 'main', messages: [message('m')] })
      .catch((caught: unknown) => caught);
    expect(StoreError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      'append(input): StubStore gave up after 100 attempts because other writers kept moving the head of branch "main" in chat "c". Nothing was written; try again.',
    );
    expect(HeadConflictError.isInstance((error as Error).cause)).toBe(true);
    expect(attempts).toBe(100);
  }, 30_000);

  it('checks the input like any append before reading anything, and is the driver own when it has one', async () => {
    const { driver, calls } = stubDriver();
    const store = new CheckedContextStore(driver);
    await expect(store.append({ chatId: 'c', branch: '', messages: [] })).rejects.toThrow(
      'append(input): branch expected a non-empty string.',
    );
    expect(calls).toEqual([]);
    const own = stubDriver({
      append: (input) => ({
        headMessageId: 'x',
        revision: 1,
        rewrittenAt: 0,
        nodes: [] as MessageNodeRecord[],
        previousHeadId: input.branch,
      }),
    });
    const result = await new CheckedContextStore(own.driver).append({
      chatId: 'c',
      branch: 'main',
      messages: [message('m')],
    });
    expect(result.previousHeadId).toBe('main');
    expect(own.calls).toEqual([]);
  });
});

describe('the kit default of forkBranch', () => {
  it('creates the next free name, and the next one when a concurrent fork took it', async () => {
    const names = ['main', 'main-v2'];
    const tried: string[] = [];
    const { driver } = stubDriver({
      listBranches: () => names.map((name) => ({ ...branch, name })),
      createBranch: (input: PreparedCreateBranch): BranchRecord => {
        tried.push(input.name);
        // Another writer forks between this fork's listing and its create, once.
        if (tried.length === 1) {
          names.push(input.name);
          throw new BranchExistsError('c', input.name);
        }
        return { ...branch, name: input.name, headMessageId: input.headMessageId };
      },
    });
    const store = new CheckedContextStore(driver);
    const fork = await store.forkBranch({
      chatId: 'c',
      from: 'main',
      headMessageId: 'm1',
      activate: true,
    });
    expect(fork).toMatchObject({ name: 'main-v4', headMessageId: 'm1' });
    expect(tried).toEqual(['main-v3', 'main-v4']);
  });

  it('passes on the driver refusals, and gives up after 100 clashes with nothing created', async () => {
    const missing = new CheckedContextStore(
      stubDriver({
        listBranches: () => {
          throw new ChatNotFoundError('c');
        },
      }).driver,
    );
    await expect(
      missing.forkBranch({ chatId: 'c', from: 'main', headMessageId: null }),
    ).rejects.toSatisfy((error) => ChatNotFoundError.isInstance(error));
    let creates = 0;
    const crowded = new CheckedContextStore(
      stubDriver({
        createBranch: (input: PreparedCreateBranch) => {
          creates += 1;
          throw new BranchExistsError('c', input.name);
        },
      }).driver,
    );
    await expect(
      crowded.forkBranch({ chatId: 'c', from: 'main', headMessageId: null }),
    ).rejects.toThrow(
      'forkBranch(input): StubStore gave up after 100 attempts because other writers kept taking the next name after "main" in chat "c". Nothing was created; try again.',
    );
    expect(creates).toBe(100);
    const long = 'f'.repeat(510);
    await expect(
      new CheckedContextStore(stubDriver().driver).forkBranch({
        chatId: 'c',
        from: long,
        headMessageId: null,
      }),
    ).rejects.toThrow('which is not a valid branch name');
  }, 30_000);
});
