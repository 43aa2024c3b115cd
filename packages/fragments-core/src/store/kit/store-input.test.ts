import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../errors/errors';
import * as root from '../../index';
import { nextBranchName } from '../branch-names';
import type { CommitInput } from '../context-store';
import {
  assertForkBranchInput,
  assertIdentifier,
  assertInputObject,
  assertJsonObject,
  assertOptionalBoolean,
  assertTitle,
  chatCursor,
  forkBranchName,
  jsonIssues,
  MAX_JSON_DEPTH,
  mergeMetadata,
  prepareAppend,
  prepareChatList,
  prepareCommit,
  prepareSaveContext,
  toJsonText,
} from './store-input';

const message = (id: string, text = 'hi') => ({
  id,
  message: { id, role: 'user', parts: [{ type: 'text', text }] },
});
const commit = (messages: unknown[]): CommitInput => ({
  chatId: 'c',
  branch: 'main',
  expectedHeadId: null,
  messages: messages as CommitInput['messages'],
});

describe('assertIdentifier', () => {
  it('accepts any non-empty string without NUL, unicode and quotes included', () => {
    for (const value of ['a', 'o\'brien "quoted"', '🎉 chat', 'x'.repeat(512), 'line\nbreak']) {
      expect(() => assertIdentifier('m', 'chatId', value)).not.toThrow();
    }
  });

  it.each([
    ['', 'chatId expected a non-empty string'],
    ['x'.repeat(513), 'expected at most 512 characters, received 513'],
    // 171 CJK characters are 513 bytes of UTF-8: within the character limit, over the byte one.
    ['漢'.repeat(171), 'expected at most 512 bytes of UTF-8, received 513'],
    ['😀'.repeat(129), 'expected at most 512 bytes of UTF-8, received 516'],
    ['a\u0000b', 'must not contain the NUL character'],
    [42, 'expected a string, received number'],
    ['bad\uD800', 'must not contain a lone UTF-16 surrogate'],
    [null, 'expected a string, received null'],
  ])('refuses %j', (value, message) => {
    expect(() => assertIdentifier('openChat(input)', 'chatId', value)).toThrow(
      `openChat(input): ${message.startsWith('chatId') ? message : `chatId ${message}`}`,
    );
  });
});

describe('identifier byte limit', () => {
  it('accepts exactly 512 bytes of UTF-8', () => {
    expect(() => assertIdentifier('m', 'id', `${'漢'.repeat(170)}ab`)).not.toThrow();
    expect(() => assertIdentifier('m', 'id', '😀'.repeat(128))).not.toThrow();
  });
});

describe('JSON depth limit', () => {
  const nest = (depth: number): unknown => {
    let value: unknown = 'leaf';
    for (let level = 0; level < depth; level += 1) value = { child: value };
    return value;
  };

  it('accepts values nested up to the limit and refuses deeper ones with a path', () => {
    expect(jsonIssues(nest(MAX_JSON_DEPTH), 'v')).toEqual([]);
    const issues = jsonIssues(nest(MAX_JSON_DEPTH + 1), 'v');
    expect(issues).toHaveLength(1);
    expect(issues[0]?.message).toBe(`nested deeper than ${MAX_JSON_DEPTH} levels`);
    expect(issues[0]?.path.startsWith('v.child.child')).toBe(true);
  });

  it('refuses 5,000 levels with a ValidationError, not a stack overflow', () => {
    expect(() => toJsonText('m', 'value', nest(5000))).toThrow(ValidationError);
    const deep = message('deep');
    (deep.message.parts[0] as Record<string, unknown>).providerMetadata = nest(5000);
    expect(() => prepareCommit(commit([deep]))).toThrow(/nested deeper than 128 levels/);
  });
});

describe('jsonIssues', () => {
  it('names the path of every problem, in arrays and objects, and accepts plain JSON', () => {
    expect(jsonIssues({ a: [1, 'x', { b: true, c: null }], d: { e: 'ok' } }, 'v')).toEqual([]);
    const bad = {
      parts: [{ text: 'fine' }, { text: 'cut \uD83D' }, { n: Number.NaN }],
      list: ['ok', undefined],
      deep: { when: new Date(0), big: 1n, call: () => 1 },
      'key\u0000': 'x',
      nul: 'a\u0000b',
    };
    expect(jsonIssues(bad, 'message')).toEqual([
      {
        path: 'message.parts[1].text',
        message: 'string contains a lone UTF-16 surrogate (not valid Unicode text)',
      },
      { path: 'message.parts[2].n', message: 'NaN is not a finite number' },
      { path: 'message.list[1]', message: 'undefined in an array' },
      { path: 'message.deep.when', message: 'Date instance is not plain JSON' },
      { path: 'message.deep.big', message: 'bigint is not JSON' },
      { path: 'message.deep.call', message: 'function is not JSON' },
      { path: 'message', message: 'a key contains the NUL character or a lone surrogate' },
      { path: 'message.nul', message: 'string contains the NUL character' },
    ]);
  });

  it('finds cycles, but not a value shared by two siblings', () => {
    const shared = { x: 1 };
    expect(jsonIssues({ left: shared, right: [shared] }, 'v')).toEqual([]);
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.children = [{ parent: cyclic }];
    expect(jsonIssues(cyclic, 'v')).toEqual([
      { path: 'v.children[0].parent', message: 'cycle (the value contains itself)' },
    ]);
  });

  it('lists at most 50 problems', () => {
    expect(
      jsonIssues(
        Array.from({ length: 80 }, () => Number.NaN),
        'v',
      ),
    ).toHaveLength(50);
  });
});

describe('prepareAppend and assertForkBranchInput', () => {
  it('checks an append like a commit, without an expected head', () => {
    expect(
      prepareAppend({ chatId: 'c', branch: 'main', messages: [message('m1')] }).map((m) => m.id),
    ).toEqual(['m1']);
    expect(() => prepareAppend({ chatId: 'c', branch: '', messages: [message('m1')] })).toThrow(
      'append(input): branch expected a non-empty string.',
    );
    expect(() =>
      prepareAppend({ chatId: 'c', branch: 'main', messages: [message('m1'), message('m1')] }),
    ).toThrow('appears twice in one commit');
    // A short batch is scanned, a long one uses a set: both name the later copy, and only it.
    for (const size of [3, 16, 17, 200]) {
      const messages = Array.from({ length: size }, (_, index) => message(`m${index}`));
      messages[size - 1] = message('m1');
      const refused = (() => {
        try {
          prepareAppend({ chatId: 'c', branch: 'main', messages });
        } catch (error) {
          return error as ValidationError;
        }
      })();
      expect(refused?.issues).toEqual([
        { path: `messages[${size - 1}].id`, message: 'id "m1" appears twice in one commit' },
      ]);
    }
    // Problems deep in a later message are named under that message.
    expect(() =>
      prepareAppend({
        chatId: 'c',
        branch: 'main',
        messages: [
          message('m1'),
          {
            id: 'm2',
            message: { id: 'm2', role: 'user', parts: [{ type: 'text', text: 'a\u0000' }] },
          },
        ],
      }),
    ).toThrow('messages[1].message.parts[0].text: string contains the NUL character');
    expect(() => prepareAppend(null as never)).toThrow('append(input): input must be an object.');
  });

  it('checks a fork input', () => {
    expect(() =>
      assertForkBranchInput({ chatId: 'c', from: 'main', headMessageId: null }),
    ).not.toThrow();
    expect(() => assertForkBranchInput({ chatId: 'c', from: '', headMessageId: 'm1' })).toThrow(
      'forkBranch(input): from expected a non-empty string.',
    );
    expect(() =>
      assertForkBranchInput({
        chatId: 'c',
        from: 'main',
        headMessageId: 'm1',
        activate: 'yes' as never,
      }),
    ).toThrow('forkBranch(input): activate must be a boolean, received string.');
  });
});

describe('prepareSaveContext', () => {
  it('serializes the lane and checks the revision', () => {
    expect(prepareSaveContext({ chatId: 'c', fragments: [{ type: 'hint', text: 'x' }] })).toBe(
      '[{"type":"hint","text":"x"}]',
    );
    expect(prepareSaveContext({ chatId: 'c', fragments: [], expectedRevision: 0 })).toBe('[]');
  });

  it.each([
    [{ chatId: 'c', fragments: {} }, 'fragments must be an array of JSON values'],
    [
      { chatId: 'c', fragments: [], expectedRevision: -1 },
      'expectedRevision must be a non-negative integer',
    ],
    [
      { chatId: 'c', fragments: [], expectedRevision: 1.5 },
      'expectedRevision must be a non-negative integer',
    ],
    [
      { chatId: 'c', fragments: [{ text: 'a\u0000' }] },
      'fragments[0].text: string contains the NUL character',
    ],
    [{ chatId: '', fragments: [] }, 'chatId expected a non-empty string'],
    [null, 'input must be an object'],
  ])('refuses %j', (input, message) => {
    expect(() => prepareSaveContext(input as never)).toThrow(message);
  });
});

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

describe('the package root', () => {
  it('exports the data rules and limits, not the store-input helpers', () => {
    expect(root.MAX_JSON_DEPTH).toBe(MAX_JSON_DEPTH);
    for (const name of ['assertIdentifier', 'jsonIssues', 'stringProblem', 'utf8Length'])
      expect(name in root, name).toBe(true);
    for (const name of ['prepareCommit', 'toJsonText', 'mergeMetadata'])
      expect(name in root, name).toBe(false);
  });
});

describe('prepareCommit', () => {
  it('serializes valid messages', () => {
    expect(prepareCommit(commit([message('a'), message('b', 'ünï')]))).toEqual([
      {
        id: 'a',
        messageId: 'a',
        role: 'user',
        json: JSON.stringify(message('a').message),
        message: message('a').message,
        engineRecordJson: null,
        newVersion: false,
      },
      {
        id: 'b',
        messageId: 'b',
        role: 'user',
        json: JSON.stringify(message('b', 'ünï').message),
        message: message('b', 'ünï').message,
        engineRecordJson: null,
        newVersion: false,
      },
    ]);
  });

  it('lets a node id differ from its message id, and takes a fork, only for a store that keeps message versions', () => {
    const version = { id: 'a~2', message: { ...message('a').message } };
    expect(prepareCommit(commit([version]), { messageVersions: true })).toEqual([
      {
        id: 'a~2',
        messageId: 'a',
        role: 'user',
        json: JSON.stringify(message('a').message),
        message: message('a').message,
        engineRecordJson: null,
        newVersion: false,
      },
    ]);
    expect(() => prepareCommit(commit([version]))).toThrow(
      'commit(input): messages[0].message.id: must equal the node id "a~2" (this store does not declare capabilities.messageVersions).',
    );
    // The message id is still an id.
    for (const bad of ['', 42, null, 'x'.repeat(1000), 'a\u0000b']) {
      expect(() =>
        prepareCommit(commit([{ id: 'n', message: { ...message('a').message, id: bad } }]), {
          messageVersions: true,
        }),
      ).toThrow(/messages\[0\]\.message\.id/);
    }
    const forked = { ...commit([message('a')]), fork: { from: 'main' } };
    expect(prepareCommit(forked, { messageVersions: true })).toHaveLength(1);
    expect(() => prepareCommit(forked)).toThrow(
      'commit(input): fork is only for a store that keeps message versions (capabilities.messageVersions is not declared); fork with forkBranch, then commit. Nothing was written.',
    );
    for (const [fork, path] of [
      [1, 'fork'],
      [[], 'fork'],
      [{}, 'fork.from'],
      [{ from: '' }, 'fork.from'],
      [{ from: 'main', activate: 1 }, 'fork.activate'],
    ] as const) {
      expect(() =>
        prepareCommit(
          { ...commit([message('a')]), fork: fork as never },
          { messageVersions: true },
        ),
      ).toThrow(path);
    }
  });

  it('serializes an engine record only for a store that keeps them, with the rules of a message', () => {
    const withRecord = { ...message('a'), engineRecord: { usage: { modelId: 'm', n: 1 } } };
    expect(prepareCommit(commit([withRecord]), { engineRecords: true })).toEqual([
      {
        id: 'a',
        messageId: 'a',
        role: 'user',
        json: JSON.stringify(message('a').message),
        message: message('a').message,
        engineRecordJson: '{"usage":{"modelId":"m","n":1}}',
        newVersion: false,
      },
    ]);
    expect(() => prepareCommit(commit([withRecord]))).toThrow(
      'commit(input): messages[0].engineRecord: this store does not keep engine records (capabilities.engineRecords is not declared).',
    );
    expect(() =>
      prepareAppend(
        { chatId: 'c', branch: 'main', messages: [withRecord] },
        { engineRecords: false },
      ),
    ).toThrow(ValidationError);
    for (const [engineRecord, problem] of [
      [[1], 'messages[0].engineRecord: expected a JSON object'],
      [null, 'messages[0].engineRecord: expected a JSON object'],
      [{ text: 'half \uDE00' }, 'messages[0].engineRecord.text: '],
      [{ value: Number.NaN }, 'messages[0].engineRecord.value: '],
    ] as const) {
      expect(() =>
        prepareCommit(commit([{ ...message('a'), engineRecord }]), { engineRecords: true }),
      ).toThrow(problem);
    }
  });

  it.each([
    ['no messages', [], 'messages must be a non-empty array'],
    [
      'a mismatched id',
      [{ id: 'a', message: { id: 'b', role: 'user', parts: [] } }],
      'messages[0].message.id: must equal the node id "a"',
    ],
    [
      'the same id twice',
      [message('a'), message('a')],
      'messages[1].id: id "a" appears twice in one commit',
    ],
    [
      'a missing role',
      [{ id: 'a', message: { id: 'a', parts: [] } }],
      'messages[0].message.role: expected a non-empty string',
    ],
    [
      'parts not an array',
      [{ id: 'a', message: { id: 'a', role: 'user', parts: {} } }],
      'messages[0].message.parts: expected an array',
    ],
    [
      'a function inside',
      [{ id: 'a', message: { id: 'a', role: 'user', parts: [{ type: 'text', text: () => 1 }] } }],
      'messages[0].message.parts[0].text: function is not JSON',
    ],
    [
      'NaN inside',
      [{ id: 'a', message: { id: 'a', role: 'user', parts: [], metadata: { n: Number.NaN } } }],
      'NaN is not a finite number',
    ],
    ['an empty id', [message('')], 'messages[0].id: expected a non-empty string'],
  ])('refuses %s', (_label, messages, text) => {
    expect(() => prepareCommit(commit(messages))).toThrow(ValidationError);
    expect(() => prepareCommit(commit(messages))).toThrow(text);
  });

  it('refuses lone surrogates in content but keeps real emoji', () => {
    expect(() => prepareCommit(commit([message('a', 'half \uDE00 of a pair')]))).toThrow(
      'messages[0].message.parts[0].text: string contains a lone UTF-16 surrogate',
    );
    expect(prepareCommit(commit([message('a', 'whole 😀 pair')]))[0]?.json).toContain('😀');
  });

  it('refuses cycles and class instances', () => {
    const parts: unknown[] = [];
    parts.push({ type: 'data-x', data: parts });
    expect(() =>
      prepareCommit(commit([{ id: 'a', message: { id: 'a', role: 'user', parts } }])),
    ).toThrow('cycle');
    expect(() =>
      prepareCommit(
        commit([{ id: 'a', message: { id: 'a', role: 'user', parts: [], metadata: new Date() } }]),
      ),
    ).toThrow('Date instance is not plain JSON');
  });

  it('refuses a bad chat id or expected head', () => {
    expect(() => prepareCommit({ ...commit([message('a')]), chatId: '' })).toThrow(
      'commit(input): chatId',
    );
    expect(() => prepareCommit({ ...commit([message('a')]), expectedHeadId: 5 as never })).toThrow(
      'expectedHeadId',
    );
  });
});

describe('prepareChatList and chatCursor', () => {
  it('defaults and bounds the page size', () => {
    expect(prepareChatList({ userId: 'u' })).toEqual({ userId: 'u', limit: 20, after: null });
    expect(() => prepareChatList({ userId: 'u', limit: 0 })).toThrow(
      'limit must be an integer from 1 to 100',
    );
    expect(() => prepareChatList({ userId: 'u', limit: 101 })).toThrow(ValidationError);
    expect(() => prepareChatList({ userId: 'u', limit: 1.5 })).toThrow(ValidationError);
  });

  it('round-trips a cursor, ids with colons included', () => {
    const cursor = chatCursor({ updatedAt: 1700000000000, id: 'chat:with:colons' });
    expect(prepareChatList({ userId: 'u', cursor }).after).toEqual({
      updatedAt: 1700000000000,
      id: 'chat:with:colons',
    });
  });

  it.each(['', 'garbage', ':id', '12:', 'NaN:x'])('refuses the malformed cursor %j', (cursor) => {
    expect(() => prepareChatList({ userId: 'u', cursor })).toThrow(
      'is not a cursor this store returned',
    );
  });
});

describe('JSON helpers', () => {
  it('toJsonText drops undefined keys and refuses what JSON cannot hold', () => {
    expect(toJsonText('m', 'value', { a: 1, b: undefined })).toBe('{"a":1}');
    expect(() => toJsonText('m', 'value', { a: 1n })).toThrow('value.a: bigint is not JSON');
    expect(() => toJsonText('m', 'value', [undefined])).toThrow('undefined in an array');
  });

  it('assertJsonObject wants an object of JSON', () => {
    expect(() => assertJsonObject('m', 'metadata', [])).toThrow(
      'metadata must be a plain JSON object',
    );
    expect(() => assertJsonObject('m', 'metadata', { s: Symbol('x') })).toThrow(
      'metadata.s: symbol is not JSON',
    );
    expect(() =>
      assertJsonObject('m', 'metadata', { nested: { ok: [1, 'two', null] } }),
    ).not.toThrow();
  });

  it('mergeMetadata merges shallowly', () => {
    expect(mergeMetadata({ a: 1, b: { c: 2 } }, { b: { d: 3 }, e: null })).toEqual({
      a: 1,
      b: { d: 3 },
      e: null,
    });
    expect(mergeMetadata({ a: 1 }, undefined)).toEqual({ a: 1 });
  });
});

describe('assertTitle, assertOptionalBoolean, assertInputObject', () => {
  it('accepts titles, and null only where a title can be cleared', () => {
    expect(() => assertTitle('openChat(input)', 'Q3 revenue 📈', false)).not.toThrow();
    expect(() => assertTitle('openChat(input)', undefined, false)).not.toThrow();
    expect(() => assertTitle('updateChat(input)', null, true)).not.toThrow();
    expect(() => assertTitle('openChat(input)', null, false)).toThrow(
      'openChat(input): title expected a string, received null.',
    );
    expect(() => assertTitle('updateChat(input)', 5, true)).toThrow(
      'title expected a string or null, received number',
    );
    expect(() => assertTitle('m', 'a\u0000b', true)).toThrow(
      'title must not contain the NUL character',
    );
    expect(() => assertTitle('m', 'a\uD800', true)).toThrow('lone UTF-16 surrogate');
  });

  it('checks flags and input objects', () => {
    expect(() => assertOptionalBoolean('createBranch(input)', 'activate', undefined)).not.toThrow();
    expect(() => assertOptionalBoolean('createBranch(input)', 'activate', 'yes')).toThrow(
      'createBranch(input): activate must be a boolean, received string.',
    );
    expect(() => assertInputObject('getBranch(input)', null)).toThrow(
      'getBranch(input): input must be an object.',
    );
    expect(() => assertInputObject('getBranch(input)', {})).not.toThrow();
  });
});
