import { describe, expect, it } from 'vitest';
import { BranchNotFoundError, ValidationError } from '../../errors/errors';
import {
  activeBranchAfterPrune,
  type LinkedNode,
  preparePrune,
  unreachableNodes,
} from './retention-input';

describe('retention input', () => {
  it('prepares prune input with its defaults', () => {
    expect(preparePrune({ chatId: 'c' })).toEqual({
      chatId: 'c',
      deleteBranches: [],
      activate: undefined,
      dryRun: false,
    });
    expect(
      preparePrune({ chatId: 'c', deleteBranches: ['a', 'b'], activate: 'main', dryRun: true }),
    ).toEqual({ chatId: 'c', deleteBranches: ['a', 'b'], activate: 'main', dryRun: true });
  });

  it('refuses bad input naming the field', () => {
    const cases: [unknown, string][] = [
      [undefined, 'input'],
      [{}, 'chatId'],
      [{ chatId: 'c', deleteBranches: 'a' }, 'deleteBranches must be an array'],
      [{ chatId: 'c', deleteBranches: ['a', 3] }, 'deleteBranches[1]'],
      [{ chatId: 'c', deleteBranches: ['a', 'a'] }, 'deleteBranches[1] names "a" a second time'],
      [{ chatId: 'c', deleteBranches: ['a'], activate: 'a' }, 'activate names "a"'],
      [{ chatId: 'c', activate: '' }, 'activate'],
      [{ chatId: 'c', dryRun: 1 }, 'dryRun'],
    ];
    for (const [input, text] of cases)
      expect(() => preparePrune(input as never)).toThrow(
        expect.objectContaining({
          name: 'ValidationError',
          message: expect.stringContaining(text),
        }),
      );
  });

  it('keeps the active branch unless it is deleted, then needs activate', () => {
    const names = ['main', 'alt', 'old'];
    const plan = (deleteBranches: string[], activate?: string) =>
      activeBranchAfterPrune(
        preparePrune({ chatId: 'c', deleteBranches, activate }),
        'main',
        names,
      );
    expect(plan([])).toBe('main');
    expect(plan(['old'])).toBe('main');
    expect(plan(['main'], 'alt')).toBe('alt');
    expect(() => plan(['main'])).toThrow(/activate is required: "main" is the active branch/);
    expect(() => plan(['old'], 'alt')).toThrow(ValidationError);
    expect(() => plan(['main', 'alt', 'old'], 'x')).toThrow(/every branch/);
    expect(() => plan(['gone'])).toThrow(BranchNotFoundError);
    expect(() => plan(['main'], 'gone')).toThrow(BranchNotFoundError);
  });

  it('finds the nodes no pointer reaches, closed under descendants', () => {
    // a ─ b ─ c        (main at c)
    //      └─ d ─ e    (nothing points here)
    // f ─ g            (checkpoint at f)
    const nodes = new Map<string, LinkedNode>(
      (
        [
          ['a', null],
          ['b', 'a'],
          ['c', 'b'],
          ['d', 'b'],
          ['e', 'd'],
          ['f', null],
          ['g', 'f'],
        ] as [string, string | null][]
      ).map(([id, parentId]) => [id, { id, parentId }]),
    );
    expect([...unreachableNodes(nodes, ['c', 'f', null])].sort()).toEqual(['d', 'e', 'g']);
    expect([...unreachableNodes(nodes, [])].length).toBe(7);
    expect([...unreachableNodes(nodes, ['e', 'g', 'c'])]).toEqual([]);
  });
});
