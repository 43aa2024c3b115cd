import { describe, expect, it } from 'vitest';
import type { ValidationError } from '../../errors/errors';
import { nextBranchName } from '../branch-names';
import { forkBranchName, prepareForkBranch } from './pointer-input';

describe('nextBranchName', () => {
  it.each([
    ['main', [], 'main-v2'],
    ['main', ['main', 'main-v2'], 'main-v3'],
    ['main-v2', ['main', 'main-v2', 'main-v3'], 'main-v4'],
    ['main-v9', ['main-v10'], 'main-v11'],
    ['topic', ['main', 'main-v2', 'topic-v01'], 'topic-v2'],
    ['-v2', [], '-v2-v2'],
  ])('from %j with %j takes %j', (from, taken, expected) => {
    expect(nextBranchName(from, taken)).toBe(expected);
  });
});

describe('forkBranchName', () => {
  it('is nextBranchName, refused with a ValidationError naming from when it would be too long', () => {
    expect(forkBranchName('main-v2', ['main', 'main-v2', 'main-v3'])).toBe('main-v4');
    const from = 'f'.repeat(510);
    expect(() => forkBranchName(from, [])).toThrow(
      `forkBranch(input): the next fork of "${from}" would be named "${from}-v2", which is not a valid branch name (expected at most 512 characters, received 513). Nothing was created; fork from a shorter name or use createBranch with a name of your own.`,
    );
    try {
      forkBranchName(from, []);
    } catch (error) {
      expect((error as ValidationError).issues).toEqual([
        { path: 'from', message: 'the derived branch name is not a valid identifier' },
      ]);
    }
    expect(forkBranchName(from.slice(1), [])).toHaveLength(512);
  });
});

describe('prepareForkBranch', () => {
  it('checks a fork input', () => {
    expect(prepareForkBranch({ chatId: 'c', from: 'main', headMessageId: null })).toEqual({
      chatId: 'c',
      from: 'main',
      headMessageId: null,
      activate: false,
    });
    expect(() => prepareForkBranch({ chatId: 'c', from: '', headMessageId: 'm1' })).toThrow(
      'forkBranch(input): from expected a non-empty string.',
    );
    expect(() =>
      prepareForkBranch({
        chatId: 'c',
        from: 'main',
        headMessageId: 'm1',
        activate: 'yes' as never,
      }),
    ).toThrow('forkBranch(input): activate must be a boolean, received string.');
  });
});
