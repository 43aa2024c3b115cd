// Reads a server-sent event stream (a reply's UI message stream, a resume, the chat's events) as
// it arrives, so a test waits on what a client has received (chunks seen), never on time.

/** A UI message stream chunk as it travels: its type, and the fields the tests read. */
export interface StreamChunk {
  readonly type: string;
  readonly messageId?: string;
  readonly delta?: string;
  readonly [key: string]: unknown;
}

/** A server-sent event stream being read. */
export interface EventStreamReader<T> {
  /** The HTTP status of the answer. */
  readonly status: number;
  /** Every event's JSON data received so far, in order (data that is not JSON is left out). */
  readonly events: readonly T[];
  /** Whether the stream ended (cleanly or not). */
  readonly ended: boolean;
  /** Resolves when the stream ends: `'end'` when the server closed it, `'error'` when it broke. */
  readonly finished: Promise<'end' | 'error'>;
  /** Goes away, as a client closing its tab does. */
  cancel(): Promise<void>;
}

/**
 * Reads `response`'s body as server-sent events into {@link EventStreamReader.events} until it
 * ends or the reader is cancelled.
 */
export function readEventStream<T = StreamChunk>(response: Response): EventStreamReader<T> {
  const events: T[] = [];
  let ended = false;
  let buffer = '';
  const body = response.body;
  const reader = body?.pipeThrough(new TextDecoderStream()).getReader();
  const finished = (async (): Promise<'end' | 'error'> => {
    if (reader === undefined) return 'end';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return 'end';
        buffer += value;
        let end = buffer.indexOf('\n\n');
        while (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block
            .split('\n')
            .filter((line) => line.startsWith('data: '))
            .map((line) => line.slice(6))
            .join('\n');
          if (data !== '') {
            try {
              events.push(JSON.parse(data) as T);
            } catch {
              // `[DONE]`, the AI SDK's last event, is no JSON.
            }
          }
          end = buffer.indexOf('\n\n');
        }
      }
    } catch {
      return 'error';
    } finally {
      ended = true;
    }
  })();
  return {
    status: response.status,
    events,
    get ended() {
      return ended;
    },
    finished,
    async cancel() {
      await reader?.cancel().catch(() => undefined);
      await finished;
    },
  };
}

/** The text a reply's chunks carry (its text deltas, joined). */
export function chunkText(chunks: readonly StreamChunk[]): string {
  return chunks.map((chunk) => (chunk.type === 'text-delta' ? (chunk.delta ?? '') : '')).join('');
}

/** How many text deltas the chunks hold. */
export function deltaCount(chunks: readonly StreamChunk[]): number {
  return chunks.filter((chunk) => chunk.type === 'text-delta').length;
}

/** POSTs a chat turn's body (what `DefaultChatTransport` sends) and reads its reply stream. */
export async function postTurn(
  url: string,
  body: Record<string, unknown>,
): Promise<EventStreamReader<StreamChunk>> {
  const response = await fetch(`${url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ trigger: 'submit-message', ...body }),
  });
  return readEventStream<StreamChunk>(response);
}

/** A user message of `text`, with the id given. */
export function userMessage(
  id: string,
  text: string,
): { id: string; role: 'user'; parts: { type: 'text'; text: string }[] } {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}
