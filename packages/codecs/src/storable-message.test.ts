import {
  type ContextFragment,
  MAX_IDENTIFIER_BYTES,
  MAX_JSON_DEPTH,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { prepareCommit } from '@ctxgraph/fragments-core/store-kit';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { everyPartKind } from './__fixtures__/ui-messages';
import { assistant, assistantText, encodeStorableMessage, message, user } from './message-fragment';
import { assertStorableMessage, storableMessageIssues } from './storable-message';

// What a store's save() does with a message: the shared input check every store runs.
const storeRefuses = (uiMessage: unknown): boolean => {
  const id = (uiMessage as { id?: unknown }).id as string;
  try {
    prepareCommit({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: null,
      messages: [{ id, message: uiMessage as UIMessage }],
    });
    return false;
  } catch (error) {
    if (ValidationError.isInstance(error)) return true;
    throw error;
  }
};

const text = (id: string, value: string): UIMessage => ({
  id,
  role: 'user',
  parts: [{ type: 'text', text: value }],
});

/** An object nested `levels` deep: `{ next: { next: … { leaf: true } } }`. */
const nested = (levels: number): Record<string, unknown> => {
  let value: Record<string, unknown> = { leaf: true };
  for (let level = 1; level < levels; level += 1) value = { next: value };
  return value;
};

const cut = '👍 looks good'.slice(0, 1); // half an emoji: a lone surrogate
const circular: Record<string, unknown> = { name: 'loop' };
circular.self = circular;

const refused: Array<[string, () => UIMessage, string, RegExp]> = [
  [
    'a lone surrogate from slice()',
    () => text('q1', cut),
    'message.parts[0].text',
    /lone UTF-16 surrogate/,
  ],
  ['a NUL character', () => text('q1', 'a\u0000b'), 'message.parts[0].text', /NUL/],
  [
    'an id longer than 512 characters',
    () => text('x'.repeat(513), 'hi'),
    'message.id',
    /at most 512 characters/,
  ],
  [
    'an id longer than 512 bytes of UTF-8',
    () => text('語'.repeat(171), 'hi'),
    'message.id',
    /at most 512 bytes/,
  ],
  ['an id with NUL', () => text('q\u0000', 'hi'), 'message.id', /NUL/],
  [
    'a BigInt in a tool output',
    () => ({
      id: 't1',
      role: 'assistant',
      parts: [
        {
          type: 'tool-sql',
          toolCallId: 'call-1',
          state: 'output-available',
          input: { query: 'select count(*) from orders' },
          output: { count: 12n },
        } as unknown as UIMessage['parts'][number],
      ],
    }),
    'message.parts[0].output.count',
    /bigint is not JSON/,
  ],
  [
    'circular metadata',
    () => ({ ...text('q1', 'hi'), metadata: circular }),
    'message.metadata.self',
    /cycle/,
  ],
  [
    `nesting deeper than ${MAX_JSON_DEPTH} levels`,
    () => ({ ...text('q1', 'hi'), metadata: nested(MAX_JSON_DEPTH) }),
    // Metadata is level 2, so its 128th level is the message's 129th.
    `message.metadata${'.next'.repeat(MAX_JSON_DEPTH - 1)}`,
    /nested deeper than 128 levels/,
  ],
  [
    'a non-finite number',
    () => ({ ...text('q1', 'hi'), metadata: { score: Number.NaN } }),
    'message.metadata.score',
    /not a finite number/,
  ],
  [
    'a class instance',
    () => ({ ...text('q1', 'hi'), metadata: { at: new Date(0) } }),
    'message.metadata.at',
    /Date instance/,
  ],
];

describe('storableMessageIssues / assertStorableMessage', () => {
  it.each(refused)('refuses %s, as every store does', (_label, build, path, pattern) => {
    const candidate = build();
    expect(storeRefuses(candidate)).toBe(true);
    const issues = storableMessageIssues(candidate);
    expect(issues.map((issue) => issue.path)).toContain(path);
    expect(issues.some((issue) => pattern.test(issue.message))).toBe(true);
    expect(() => assertStorableMessage(candidate, 'set(...fragments): fragments[0]')).toThrow(
      ValidationError,
    );
  });

  it('accepts what stores accept, up to the limits exactly', () => {
    const accepted: UIMessage[] = [
      everyPartKind,
      text('x'.repeat(MAX_IDENTIFIER_BYTES), 'hi'),
      text('語'.repeat(170), '👍 whole emoji, 語, ä'),
      // The message is level 1, so metadata may be 127 levels deep.
      { ...text('q1', 'hi'), metadata: nested(MAX_JSON_DEPTH - 1) },
    ];
    for (const candidate of accepted) {
      expect(storeRefuses(candidate)).toBe(false);
      expect(storableMessageIssues(candidate)).toEqual([]);
      expect(() => assertStorableMessage(candidate, 'here')).not.toThrow();
    }
  });

  it('names the caller, the message and the path', () => {
    expect(() => assertStorableMessage(text('q1', cut), 'set(...fragments): fragments[2]')).toThrow(
      'set(...fragments): fragments[2]: message "q1": message.parts[0].text: string contains a lone UTF-16 surrogate (not valid Unicode text).',
    );
    expect(storableMessageIssues(text('q1', cut), 'fragments[2].codec.encode()')).toEqual([
      {
        path: 'fragments[2].codec.encode().parts[0].text',
        message: 'string contains a lone UTF-16 surrogate (not valid Unicode text)',
      },
    ]);
  });

  it('refuses what is not a UIMessage, whatever the codec returned', () => {
    expect(storableMessageIssues(undefined)).toEqual([
      { path: 'message', message: 'expected a UIMessage object, received undefined' },
    ]);
    expect(
      storableMessageIssues({ id: 'a', role: 'robot', parts: [{}] }).map((i) => i.path),
    ).toEqual(['message.role', 'message.parts[0].type']);
  });
});

describe('message builders refuse at build time what a store would refuse on save', () => {
  it.each(refused)('message() refuses %s', (_label, build, path) => {
    const candidate = build();
    const error = (() => {
      try {
        message(candidate);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(ValidationError.isInstance(error)).toBe(true);
    const issues = (error as ValidationError).issues.map((issue) => issue.path);
    expect(issues).toContain(path);
  });

  it('names the builder, the message id and the argument the problem came from', () => {
    expect(() => user(cut, { id: 'q1' })).toThrow(
      'user(content, options): message "q1": content: string contains a lone UTF-16 surrogate (not valid Unicode text).',
    );
    expect(() => assistantText('a\u0000b', { id: 'a1' })).toThrow(
      'assistantText(text, options): message "a1": text: string contains the NUL character.',
    );
    expect(() => user(text('q1', cut))).toThrow(
      'user(content, options): message "q1": content.parts[0].text: string contains a lone UTF-16 surrogate',
    );
    expect(() => user('hi', { id: 'x'.repeat(513) })).toThrow(
      'user(content, options): options.id: expected at most 512 characters, received 513.',
    );
    expect(() => assistant('hi', { id: '語'.repeat(171) })).toThrow(
      'assistant(content, options): options.id: expected at most 512 bytes of UTF-8, received 513.',
    );
    expect(() =>
      user('hi', { id: 'q2', metadata: { nested: nested(MAX_JSON_DEPTH - 1) } }),
    ).toThrow(/message "q2": options\.metadata(\.next|\.nested)+: nested deeper than 128 levels/);
    expect(() => user('hi', { metadata: nested(MAX_JSON_DEPTH - 1) })).not.toThrow();
  });

  it('throws a ValidationError, not a TypeError, for BigInt and circular content', () => {
    const withBigInt = (): unknown =>
      assistant({
        id: 't1',
        role: 'assistant',
        parts: [
          {
            type: 'tool-sql',
            toolCallId: 'call-1',
            state: 'output-available',
            input: { query: 'select count(*) from orders' },
            output: { count: 9007199254740993n },
          } as unknown as UIMessage['parts'][number],
        ],
      });
    expect(withBigInt).toThrow(ValidationError);
    expect(withBigInt).toThrow(
      'assistant(content, options): message "t1": content.parts[0].output.count: bigint is not JSON.',
    );
    const withCycle = (): unknown => user('hi', { id: 'q3', metadata: circular });
    expect(withCycle).toThrow(ValidationError);
    expect(withCycle).toThrow(
      'user(content, options): message "q3": options.metadata.self: cycle (the value contains itself).',
    );
    const part: Record<string, unknown> = { type: 'data-loop' };
    part.data = part;
    const circularPart = (): unknown =>
      message({ id: 'm1', role: 'assistant', parts: [part as UIMessage['parts'][number]] });
    expect(circularPart).toThrow(ValidationError);
    expect(circularPart).toThrow('message "m1": message.parts[0].data: cycle');
  });
});

describe('encodeStorableMessage', () => {
  const where = 'set(...fragments): fragments[0]';

  it("returns a builder's message (a fresh copy each time)", () => {
    const fragment = assistantText('hello', { id: 'a1' });
    const first = encodeStorableMessage(fragment, where);
    expect(first).toEqual({
      id: 'a1',
      role: 'assistant',
      parts: [{ type: 'text', text: 'hello' }],
    });
    expect(encodeStorableMessage(fragment, where)).not.toBe(first);
  });

  it('checks what any other codec encodes, naming the caller, the message and the path', () => {
    const custom: ContextFragment = {
      name: 'user',
      type: 'message',
      data: '',
      codec: {
        encode: () => ({ id: 'q1', role: 'user', parts: [{ type: 'text', text: 'cut \uD83D' }] }),
        decode: () => ({}),
      },
    };
    expect(() => encodeStorableMessage(custom, where)).toThrow(ValidationError);
    expect(() => encodeStorableMessage(custom, where)).toThrow(
      'set(...fragments): fragments[0]: message "q1": message.parts[0].text: string contains a lone UTF-16 surrogate',
    );
  });

  it("checks a builder's fragment again once its encode was replaced", () => {
    const fragment = user('fine', { id: 'q1' });
    fragment.codec.encode = () =>
      ({ id: 'q1', role: 'user', parts: [{ type: 'text', text: 'a\u0000b' }] }) as UIMessage;
    expect(() => encodeStorableMessage(fragment, where)).toThrow(
      'message.parts[0].text: string contains the NUL character',
    );
  });
});
