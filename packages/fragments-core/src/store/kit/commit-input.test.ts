import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../errors/errors';
import type { CommitInput } from '../context-store';
import { prepareAppend, prepareCommit } from './commit-input';

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

describe('prepareAppend', () => {
  it('checks an append like a commit, without an expected head', () => {
    expect(
      prepareAppend({ chatId: 'c', branch: 'main', messages: [message('m1')] }).messages.map(
        (entry) => entry.id,
      ),
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
});

describe('prepareCommit', () => {
  it('serializes valid messages', () => {
    expect(prepareCommit(commit([message('a'), message('b', 'ünï')])).messages).toEqual([
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

  it('lets a node id differ from its message id (a version), and takes a fork', () => {
    const version = { id: 'a~2', message: { ...message('a').message } };
    expect(prepareCommit(commit([version])).messages).toEqual([
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
    // The message id is still an id.
    for (const bad of ['', 42, null, 'x'.repeat(1000), 'a\u0000b']) {
      expect(() =>
        prepareCommit(commit([{ id: 'n', message: { ...message('a').message, id: bad } }])),
      ).toThrow(/messages\[0\]\.message\.id/);
    }
    const forked = { ...commit([message('a')]), fork: { from: 'main' } };
    expect(prepareCommit(forked).fork).toEqual({ from: 'main', activate: false });
    expect(prepareCommit(commit([message('a')])).fork).toBeUndefined();
    for (const [fork, path] of [
      [1, 'fork'],
      [[], 'fork'],
      [{}, 'fork.from'],
      [{ from: '' }, 'fork.from'],
      [{ from: 'main', activate: 1 }, 'fork.activate'],
    ] as const) {
      expect(() => prepareCommit({ ...commit([message('a')]), fork: fork as never })).toThrow(path);
    }
  });

  it('serializes an engine record with the rules of a message', () => {
    const withRecord = { ...message('a'), engineRecord: { usage: { modelId: 'm', n: 1 } } };
    expect(prepareCommit(commit([withRecord])).messages).toEqual([
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
    expect(
      prepareAppend({ chatId: 'c', branch: 'main', messages: [withRecord] }).messages[0]
        ?.engineRecordJson,
    ).toBe('{"usage":{"modelId":"m","n":1}}');
    for (const [engineRecord, problem] of [
      [[1], 'messages[0].engineRecord: expected a JSON object'],
      [null, 'messages[0].engineRecord: expected a JSON object'],
      [{ text: 'half \uDE00' }, 'messages[0].engineRecord.text: '],
      [{ value: Number.NaN }, 'messages[0].engineRecord.value: '],
    ] as const) {
      expect(() => prepareCommit(commit([{ ...message('a'), engineRecord }]))).toThrow(problem);
    }
  });

  it('refuses a message or record above maxJsonBytes, naming it, and a live reply unless the store serves them', () => {
    const big = message('a', 'x'.repeat(100));
    expect(() => prepareCommit(commit([big]), { maxJsonBytes: 50 })).toThrow(
      /commit\(input\): messages\[0\]\.message is \d+ bytes, more than the store accepts \(50\)/,
    );
    expect(() =>
      prepareCommit(commit([{ ...message('a'), engineRecord: { n: 'y'.repeat(80) } }]), {
        maxJsonBytes: 70,
      }),
    ).toThrow('messages[0].engineRecord is');
    const live = {
      ...commit([message('a')]),
      startReply: { replyId: 'r', owner: 'o', leaseMs: 1 },
    };
    expect(() => prepareCommit(live)).toThrow(
      'startReply needs a store that declares capabilities.liveReplies',
    );
    expect(prepareCommit(live, { liveReplies: true }).startReply).toEqual({
      replyId: 'r',
      owner: 'o',
      leaseMs: 1,
      dataJson: '{}',
    });
  });

  it.each([
    ['no messages', [], 'messages must be a non-empty array'],
    [
      'a message id that is no id',
      [{ id: 'a', message: { id: '', role: 'user', parts: [] } }],
      'messages[0].message.id: expected a non-empty string',
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
    expect(prepareCommit(commit([message('a', 'whole 😀 pair')])).messages[0]?.json).toContain(
      '😀',
    );
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
