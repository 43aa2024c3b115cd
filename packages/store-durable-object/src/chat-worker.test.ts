import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import readme from '../README.md?raw';
import example from './__fixtures__/chat-worker.ts?raw';

function say(chatId: string, text: string): Promise<unknown> {
  return SELF.fetch('https://chat.example/say', {
    method: 'POST',
    body: JSON.stringify({ chatId, userId: 'ada', text }),
  }).then((response) => response.json());
}

describe("the README's Worker: a chat per object, reached over RPC by the chat id", () => {
  it('keeps each chat in its own object, through the engine', async () => {
    const first = `chat-${crypto.randomUUID()}`;
    const second = `chat-${crypto.randomUUID()}`;
    expect(await say(first, 'Hello')).toEqual(['Hello']);
    expect(await say(second, 'Another chat')).toEqual(['Another chat']);
    expect(await say(first, 'Still there?')).toEqual(['Hello', 'Still there?']);
  });
});

it("the README's example is this Worker, as written", () => {
  expect(readme).toContain(`\`\`\`ts\n${example.trimEnd()}\n\`\`\``);
});
