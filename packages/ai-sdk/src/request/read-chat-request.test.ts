import { tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ChatRequestError } from '../errors';
import { readChatBody } from './read-chat-body';
import { readChatRequest } from './read-chat-request';

const userMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] };

async function refusal(
  body: unknown,
  schemas = {},
  validate: 'all' | 'shape' = 'all',
): Promise<ChatRequestError> {
  const error = await readChatRequest(body, schemas, validate).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(ChatRequestError.isInstance(error)).toBe(true);
  return error as ChatRequestError;
}

describe('readChatRequest', () => {
  it("reads DefaultChatTransport's body and the last-message-only body", async () => {
    const full = await readChatRequest({
      id: 'chat-1',
      messages: [userMessage],
      trigger: 'submit-message',
      messageId: undefined,
      extraField: 42,
    });
    expect(full).toMatchObject({ chatId: 'chat-1', trigger: 'submit-message', lastOnly: false });
    expect(full.messages).toEqual([userMessage]);
    expect(full.extra).toEqual({ extraField: 42 });
    const last = await readChatRequest({
      id: 'chat-1',
      message: userMessage,
      trigger: 'regenerate-message',
    });
    expect(last).toMatchObject({ lastOnly: true, trigger: 'regenerate-message' });
  });

  it.each([
    ['null', null, 'JSON object'],
    ['an array', [userMessage], 'JSON object'],
    ['no id', { messages: [userMessage] }, 'body.id'],
    ['an empty id', { id: '', messages: [userMessage] }, 'empty string'],
    ['a numeric id', { id: 7, messages: [userMessage] }, 'body.id'],
    [
      'another trigger',
      { id: 'c', trigger: 'resume-stream', messages: [userMessage] },
      "'resume-stream'",
    ],
    ['no messages', { id: 'c' }, 'non-empty messages array'],
    ['an empty list', { id: 'c', messages: [] }, 'an empty array'],
    ['a message without parts', { id: 'c', messages: [{ id: 'm', role: 'user' }] }, 'messages'],
    ['duplicate ids', { id: 'c', messages: [userMessage, userMessage] }, 'repeats the id'],
    [
      'a system message',
      { id: 'c', messages: [{ id: 's', role: 'system', parts: [{ type: 'text', text: 'x' }] }] },
      'system message',
    ],
    [
      'an assistant last without messageId',
      {
        id: 'c',
        messages: [
          userMessage,
          { id: 'a', role: 'assistant', parts: [{ type: 'text', text: 'x' }] },
        ],
      },
      'messageId must name it',
    ],
  ])('refuses %s with a 400-class ChatRequestError', async (_name, body, words) => {
    const error = await refusal(body);
    expect(error.status).toBe(400);
    expect(error.message).toContain(words);
    expect(error.issues.length).toBeGreaterThan(0);
  });

  it("validates metadata and tool parts with the app's schemas", async () => {
    const metadataSchema = z.object({ tag: z.string() });
    await refusal(
      { id: 'c', messages: [{ ...userMessage, metadata: { tag: 1 } }] },
      { metadataSchema },
    );
    const tools = {
      getWeather: tool({
        inputSchema: z.object({ city: z.string() }),
        execute: async () => 'sunny',
      }),
    };
    const badTool = {
      id: 'a',
      role: 'assistant',
      parts: [
        { type: 'tool-getWeather', toolCallId: 't', state: 'input-available', input: { city: 3 } },
      ],
    };
    await refusal({ id: 'c', messages: [userMessage, badTool], messageId: 'a' }, { tools });
  });
});

const nested = (depth: number): unknown => (depth === 0 ? 'bottom' : { inner: nested(depth - 1) });
const withText = (text: string) => ({ id: 'u2', role: 'user', parts: [{ type: 'text', text }] });

describe('readChatRequest refuses what the store could not keep, before anything is written', () => {
  it.each([
    ['NUL in a text', { id: 'c', messages: [withText('a\u0000b')] }, 'messages[0].parts[0].text'],
    [
      'a lone surrogate in a text',
      { id: 'c', messages: [userMessage, withText('half an emoji \ud83d')] },
      'messages[1].parts[0].text',
    ],
    [
      'a data part nested 300 deep',
      {
        id: 'c',
        messages: [{ ...userMessage, parts: [{ type: 'data-deep', data: nested(300) }] }],
      },
      'messages[0].parts[0].data.inner',
    ],
    [
      'NUL in a key of a data part',
      {
        id: 'c',
        messages: [{ ...userMessage, parts: [{ type: 'data-x', data: { 'a\u0000': 1 } }] }],
      },
      'messages[0].parts[0].data',
    ],
    [
      'NUL in metadata',
      { id: 'c', messages: [{ ...userMessage, metadata: { note: 'a\u0000' } }] },
      'messages[0].metadata.note',
    ],
    [
      'a part without a type',
      { id: 'c', messages: [{ ...userMessage, parts: [{ text: 'x' }] }] },
      'messages[0].parts[0].type',
    ],
    [
      'NUL in the last-message body',
      { id: 'c', message: withText('\u0000') },
      'message.parts[0].text',
    ],
    [
      'a 600-byte message id',
      { id: 'c', messages: [{ ...userMessage, id: '€'.repeat(200) }] },
      'messages[0].id',
    ],
    [
      'a 600-byte messageId',
      { id: 'c', messageId: 'x'.repeat(600), messages: [userMessage] },
      'messageId',
    ],
    ['NUL in messageId', { id: 'c', messageId: 'a\u0000', messages: [userMessage] }, 'messageId'],
    ['NUL in the chat id', { id: 'c\u0000', messages: [userMessage] }, 'id'],
  ])('%s, with full validation and with the shape check alone', async (_name, body, path) => {
    for (const validate of ['all', 'shape'] as const) {
      const error = await refusal(body, {}, validate);
      expect(error.status).toBe(400);
      expect(error.message).toMatch(/^Chat request refused: /);
      expect(error.issues.map((issue) => issue.path).join(' ')).toContain(path);
    }
  });

  it('keeps what the store keeps: 120 levels of data, emoji, any other character', async () => {
    const request = await readChatRequest(
      {
        id: 'c',
        messages: [
          {
            ...userMessage,
            parts: [
              { type: 'text', text: 'emoji 🙂, tabs\t and \u0001 control characters' },
              { type: 'data-deep', data: nested(120) },
            ],
          },
        ],
      },
      {},
      'shape',
    );
    expect(request.messages).toHaveLength(1);
  });
});

describe('readChatBody', () => {
  const post = (body: string) => new Request('http://localhost/api/chat', { method: 'POST', body });

  it('parses a JSON body', async () => {
    expect(await readChatBody(post('{"id":"c","messages":[]}'))).toEqual({ id: 'c', messages: [] });
  });

  it.each([
    ['not JSON', '{ nope', '6 characters that are not JSON'],
    ['an empty body', '', 'an empty body'],
    ['a body cut off', '{"id":"c","messages":[{"id":"u1"', 'not JSON'],
  ])('refuses %s with a ChatRequestError (400)', async (_name, body, words) => {
    const error = await readChatBody(post(body)).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(ChatRequestError.isInstance(error)).toBe(true);
    expect((error as ChatRequestError).status).toBe(400);
    expect((error as ChatRequestError).message).toContain(words);
  });
});
