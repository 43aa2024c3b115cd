import { tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ChatRequestError } from '../errors';
import { readChatRequest } from './read-chat-request';

const userMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] };

async function refusal(body: unknown, schemas = {}): Promise<ChatRequestError> {
  const error = await readChatRequest(body, schemas).then(
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
