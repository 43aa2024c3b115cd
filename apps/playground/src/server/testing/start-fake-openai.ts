import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake server saw: the JSON bodies of the chat completion requests. */
export interface FakeOpenAI {
  readonly baseURL: string;
  readonly requests: unknown[];
  close(): Promise<void>;
}

/** The usage the fake server reports at the end of each streamed reply (as OpenAI does). */
export const FAKE_USAGE = { promptTokens: 120, completionTokens: 7, cachedTokens: 64 } as const;

/**
 * A local stand-in for an OpenAI-compatible server (what OPENAI_BASE_URL points at): answers
 * POST /chat/completions with a streamed reply made of `chunks`, then a usage chunk
 * ({@link FAKE_USAGE}), or with HTTP 500 when `fail`. With `hold`, it sends the first chunk,
 * then waits for `hold` before sending the rest.
 */
export async function startFakeOpenAI(
  chunks: readonly string[],
  fail = false,
  hold?: Promise<void>,
): Promise<FakeOpenAI> {
  const requests: unknown[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    request.on('end', () => {
      requests.push(JSON.parse(body || '{}'));
      if (fail || request.url !== '/chat/completions') {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ error: { message: 'the fake model is down', type: 'server_error' } }),
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const base = {
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'fake-model',
      };
      const send = (choice: unknown) =>
        response.write(`data: ${JSON.stringify({ ...base, choices: [choice] })}\n\n`);
      const finish = () => {
        for (const text of chunks.slice(1)) {
          send({ index: 0, delta: { content: text }, finish_reason: null });
        }
        send({ index: 0, delta: {}, finish_reason: 'stop' });
        // The usage chunk OpenAI sends last (no choices), as `stream_options.include_usage` asks.
        response.write(
          `data: ${JSON.stringify({
            ...base,
            choices: [],
            usage: {
              prompt_tokens: FAKE_USAGE.promptTokens,
              completion_tokens: FAKE_USAGE.completionTokens,
              total_tokens: FAKE_USAGE.promptTokens + FAKE_USAGE.completionTokens,
              prompt_tokens_details: { cached_tokens: FAKE_USAGE.cachedTokens },
            },
          })}\n\n`,
        );
        response.end('data: [DONE]\n\n');
      };
      send({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null });
      if (chunks[0] !== undefined) {
        send({ index: 0, delta: { content: chunks[0] }, finish_reason: null });
      }
      if (hold === undefined) finish();
      else hold.then(finish);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
