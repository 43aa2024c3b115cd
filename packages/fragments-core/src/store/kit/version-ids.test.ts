import { describe, expect, it } from 'vitest';
import { MAX_IDENTIFIER_LENGTH } from '../../rules/limits';
import { type PreparedCommitMessage, prepareCommit } from './commit-input';
import {
  assignVersionIds,
  versionNodeId,
  versionNodeIdCandidates,
  versionNumber,
} from './version-ids';

const entry = (id: string, messageId: string, newVersion: boolean): PreparedCommitMessage => ({
  id,
  messageId,
  role: 'user',
  json: '{}',
  message: { id: messageId, role: 'user', parts: [] },
  engineRecordJson: null,
  newVersion,
});

describe('version node ids', () => {
  it('reads the version number of a node id: <id>~<n>, the short form, 1 for anything else', () => {
    expect(versionNumber('q2', 'q2')).toBe(1);
    expect(versionNumber('q2', 'q2~2')).toBe(2);
    expect(versionNumber('q2', 'q2~150')).toBe(150);
    expect(versionNumber('q2~2', 'q2~2~3')).toBe(3);
    expect(versionNumber('q2', '~7~0a1b2c3d')).toBe(7);
    // Legacy short ids had 24 random hex digits: only the number counts.
    expect(versionNumber('q2', '~4~00112233445566778899aabb')).toBe(4);
    for (const other of ['q2~', 'q2~0', 'q2~02', 'q2~x', 'q3~4', 'q2~2~3', 'q2~1e3'])
      expect(versionNumber('q2', other), other).toBe(1);
    expect(versionNumber('q2', `q2~${'9'.repeat(30)}`)).toBe(1);
  });

  it('makes <id>~<n>, or ~<n>~<hash> when that would be too long for an id', () => {
    expect(versionNodeId('q2', 2)).toBe('q2~2');
    const long = 'x'.repeat(MAX_IDENTIFIER_LENGTH - 1);
    expect(versionNodeId(long, 2)).toMatch(/^~2~[0-9a-f]{8}$/);
    expect(versionNodeId(long, 3)).toBe(versionNodeId(long, 2).replace('~2~', '~3~'));
    expect(versionNodeId(`${long}y`, 2)).not.toBe(versionNodeId(long, 2));
    // Counted in UTF-8 bytes too: 170 three-byte characters and `~2` fill an id, one more byte
    // does not fit.
    expect(versionNodeId('語'.repeat(170), 2)).toBe(`${'語'.repeat(170)}~2`);
    expect(versionNodeId(`${'語'.repeat(170)}a`, 2)).toMatch(/^~2~[0-9a-f]{8}$/);
  });

  it('offers the ids from one above the newest version, endlessly', () => {
    const take = (messageId: string, newest: string | null, count: number): string[] => {
      const candidates = versionNodeIdCandidates(messageId, newest);
      return Array.from({ length: count }, () => candidates.next().value);
    };
    expect(take('q2', null, 2)).toEqual(['q2~2', 'q2~3']);
    expect(take('q2', 'q2', 2)).toEqual(['q2~2', 'q2~3']);
    expect(take('q2', 'q2~9', 3)).toEqual(['q2~10', 'q2~11', 'q2~12']);
  });

  it('assigns ids past taken ones and the write’s own, and leaves a write without versions as it is', () => {
    const plain = [entry('a', 'a', false)];
    const reads = {
      newestNodeOf: (messageId: string) => (messageId === 'q2' ? 'q2~3' : null),
      hasNode: (nodeId: string) => nodeId === 'q2~4',
    };
    expect(assignVersionIds(plain, reads)).toBe(plain);
    const assigned = assignVersionIds(
      [entry('q2', 'q2', true), entry('q2~5', 'q2~5', false), entry('new', 'new', true)],
      reads,
    );
    expect(assigned.map((each) => [each.id, each.messageId, each.newVersion])).toEqual([
      ['q2~6', 'q2', false],
      ['q2~5', 'q2~5', false],
      ['new~2', 'new', false],
    ]);
  });

  it('prepares newVersion: a boolean, with the node id equal to the message id', () => {
    const input = (newVersion: unknown, id = 'q2') => ({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: null,
      messages: [{ id, message: { id: 'q2', role: 'user', parts: [] }, newVersion } as never],
    });
    expect(prepareCommit(input(true)).messages[0]?.newVersion).toBe(true);
    expect(prepareCommit(input(undefined)).messages[0]?.newVersion).toBe(false);
    expect(() => prepareCommit(input('yes'))).toThrow(
      /messages\[0\]\.newVersion: expected a boolean, received string/,
    );
    expect(() => prepareCommit(input(true, 'node'))).toThrow(
      /messages\[0\]\.id: must equal message\.id "q2" for a new version/,
    );
  });
});
