import { safeValidateUIMessages, type UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { everyPartKind } from './__fixtures__/ui-messages';
import { parsePlainMessage, parsePlainMessages } from './plain-messages';
import { checkMessages, validateMessages } from './validate-messages';

/** Keys in order, `undefined` values kept: what must match the AI SDK's parse exactly. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (typeof value !== 'object' || value === null)
    return value === undefined ? '<undefined>' : value;
  return Object.keys(value).map((key) => [key, shape((value as Record<string, unknown>)[key])]);
}

async function sdkParse(candidate: unknown): Promise<UIMessage | undefined> {
  const result = await safeValidateUIMessages({ messages: [candidate] });
  return result.success ? (result.data[0] as UIMessage) : undefined;
}

// Building blocks: each candidate message is a combination, valid or not.
const ids: unknown[] = ['m1', '', 7, undefined];
const roles: unknown[] = ['user', 'assistant', 'system', 'tool', undefined];
const parts: unknown[] = [
  { type: 'text', text: 'hello' },
  { text: 'order', type: 'text', extra: true },
  { type: 'text', text: 'streamed', state: 'streaming' },
  { type: 'text', text: 'done', state: 'done' },
  { type: 'text', text: 'kept undefined', state: undefined, providerMetadata: undefined },
  { type: 'text', text: 'bad state', state: 'bogus' },
  { type: 'text', text: 7 },
  { type: 'text', text: 'pm', providerMetadata: { openai: { id: 'x' } } },
  { type: 'reasoning', text: 'thinking' },
  { type: 'reasoning', id: 'r1', text: 'with id', state: 'done' },
  { type: 'reasoning', id: 5, text: 'bad id' },
  { type: 'reasoning', id: undefined, text: 'undefined id' },
  { type: 'step-start' },
  { type: 'step-start', stray: 1 },
  { type: 'data-weather', data: { c: 1 } },
  { type: 'file', mediaType: 'text/plain', url: 'https://x' },
  { type: 'bogus' },
  null,
  'text',
  Object.assign(Object.create({ inherited: true }), { type: 'text', text: 'class-like' }),
];
const partLists: unknown[] = [
  [],
  ...parts.map((part) => [part]),
  [parts[0], parts[8], parts[12], parts[2]],
  [parts[0], parts[14]],
  'not an array',
];
const extras: Array<Record<string, unknown>> = [
  {},
  { metadata: { model: 'x', nested: { a: [1, 2] } } },
  { metadata: undefined },
  { metadata: 'any value' },
  { unknownKey: 1 },
];

function* candidates(): Generator<unknown> {
  for (const id of ids)
    for (const role of roles)
      for (const list of partLists)
        for (const extra of extras) {
          const message: Record<string, unknown> = { ...extra };
          if (id !== undefined) message.id = id;
          if (role !== undefined) message.role = role;
          message.parts = list;
          yield message;
        }
  yield null;
  yield [];
  yield 'message';
  yield everyPartKind;
  yield Object.assign(Object.create(null), {
    id: 'n',
    role: 'user',
    parts: [{ type: 'text', text: 'x' }],
  });
}

describe('parsePlainMessage', () => {
  it('returns exactly what the AI SDK returns whenever it answers, and answers for plain text messages', async () => {
    let answered = 0;
    let total = 0;
    for (const candidate of candidates()) {
      total += 1;
      const fast = parsePlainMessage(candidate);
      const sdk = await sdkParse(candidate);
      if (fast === undefined) continue;
      answered += 1;
      // Never accepts what the SDK refuses, and returns the same keys in the same order.
      expect(sdk, JSON.stringify(candidate)).toBeDefined();
      expect(shape(fast), JSON.stringify(candidate)).toEqual(shape(sdk));
      // Metadata passes through as the same value, as the SDK's `z.unknown()` does.
      const input = candidate as { metadata?: unknown };
      if (typeof input.metadata === 'object') expect(fast.metadata).toBe(input.metadata);
    }
    expect(total).toBeGreaterThan(2000);
    expect(answered).toBeGreaterThan(200);
  });

  it('leaves to the SDK what it does not know: other parts, provider metadata, class instances, refused shapes', () => {
    expect(parsePlainMessage(everyPartKind)).toBeUndefined();
    expect(
      parsePlainMessage({
        id: 'a',
        role: 'user',
        parts: [{ type: 'text', text: 'x', providerMetadata: { p: { k: 1 } } }],
      }),
    ).toBeUndefined();
    expect(parsePlainMessage({ id: 'a', role: 'user', parts: [] })).toBeUndefined();
    expect(
      parsePlainMessage({ id: 'a', role: 'tool', parts: [{ type: 'text', text: 'x' }] }),
    ).toBeUndefined();
    class Message {
      id = 'a';
      role = 'user';
      parts = [{ type: 'text', text: 'x' }];
    }
    expect(parsePlainMessage(new Message())).toBeUndefined();
    // The only plain message with no parts the SDK accepts: an assistant's.
    expect(parsePlainMessage({ id: 'a', role: 'assistant', parts: [] })).toEqual({
      id: 'a',
      role: 'assistant',
      parts: [],
    });
  });
});

describe('validateMessages with plain and other messages mixed', () => {
  const plain: UIMessage = { id: 'p', role: 'user', parts: [{ type: 'text', text: 'hi' }] };
  const data = {
    id: 'd',
    role: 'assistant',
    parts: [{ type: 'data-note', data: { n: 1 }, stray: true }],
  };

  it('keeps the order of the list, and the SDK still parses (and strips) the others', async () => {
    const result = await validateMessages([plain, data, { ...plain, id: 'p2' }]);
    expect(result.map((message) => message.id)).toEqual(['p', 'd', 'p2']);
    expect(result[1]?.parts[0]).toEqual({ type: 'data-note', data: { n: 1 } });
    const checks = await checkMessages([plain, data]);
    expect(checks.map((check) => check.success)).toEqual([true, true]);
  });

  it('the first invalid message is still reported by position, whichever way the others went', async () => {
    await expect(
      validateMessages([
        plain,
        data,
        { id: 'x', role: 'user', parts: [{ type: 'text', text: 1 }] },
      ]),
    ).rejects.toMatchObject({ index: 2, messageId: 'x' });
  });

  it('with a metadataSchema every message goes through the SDK, so the schema sees all metadata', async () => {
    const metadataSchema = z.object({ n: z.number() }).transform((value) => ({ n: value.n * 2 }));
    const [doubled] = await validateMessages([{ ...plain, metadata: { n: 2 } }], {
      metadataSchema,
    });
    expect(doubled?.metadata).toEqual({ n: 4 });
    await expect(validateMessages([plain], { metadataSchema })).rejects.toThrow(/metadata/);
  });
});

describe('parsePlainMessages', () => {
  const plain = { id: 'p', role: 'user', parts: [{ type: 'text', text: 'hi' }] };

  it('is the SDK result for a list of plain messages, and undefined as soon as one needs the SDK', async () => {
    const list = [
      plain,
      {
        id: 'a',
        role: 'assistant',
        parts: [{ type: 'reasoning', text: 'r' }, { type: 'step-start' }],
      },
    ];
    expect(parsePlainMessages(list)).toEqual(await validateMessages(list));
    expect(parsePlainMessages([])).toEqual([]);
    expect(parsePlainMessages([plain, everyPartKind])).toBeUndefined();
    expect(parsePlainMessages([plain, { id: 'x', role: 'user', parts: [] }])).toBeUndefined();
    expect(parsePlainMessages('nope' as unknown as unknown[])).toBeUndefined();
  });

  it('leaves everything to the SDK when a metadataSchema must see the metadata', () => {
    expect(parsePlainMessages([plain], { metadataSchema: z.object({}) })).toBeUndefined();
  });
});
