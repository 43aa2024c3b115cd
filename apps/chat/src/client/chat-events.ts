/** One event of `GET /api/chat/:id/events`: the chat's change revision and its live reply. */
export interface ChatEvent {
  /** A number that only grows: it moves with every change any process makes to the chat. */
  /** The chat's change revision: a number that only grows. */
  readonly version: number;
  /** The most recently started live reply's id (its `start` chunk's messageId), or null. */
  readonly live: string | null;
  /**
   * The id of the message that live reply answers (the question it follows), or null (nothing
   * live, or a server that does not say).
   */
  readonly follows?: string | null;
}

/** Options of {@link followChatEvents}. */
export interface FollowChatEventsOptions {
  /** The events route of the chat. */
  readonly url: string;
  /** Told each event, in order. */
  readonly onEvent: (event: ChatEvent) => void;
  /** Ends the following (the page leaves the chat). */
  readonly signal: AbortSignal;
  /**
   * How long to wait before connecting again after the stream ended or failed, or while the chat
   * does not exist yet (404); doubled after each attempt that got no event, up to 15 s.
   * @default 2000
   */
  readonly retryMs?: number;
}

/** How the page reaches a running {@link followChatEvents}. */
export interface ChatEventsFollower {
  /** Connect again now instead of after the wait (the page just created the chat). */
  retryNow(): void;
}

function isChatEvent(value: unknown): value is ChatEvent {
  if (typeof value !== 'object' || value === null) return false;
  const { version, live } = value as Record<string, unknown>;
  return typeof version === 'number' && (live === null || typeof live === 'string');
}

/** The data of each complete event in `buffer`, and what is left of an event still arriving. */
function takeEvents(buffer: string): { data: string[]; rest: string } {
  const data: string[] = [];
  const blocks = buffer.split(/\r?\n\r?\n/);
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    const lines = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''));
    // Comments (": keep-alive") carry no data.
    if (lines.length > 0) data.push(lines.join('\n'));
  }
  return { data, rest };
}

/**
 * Follows a chat's change events (server-sent events read with `fetch`, so it runs wherever
 * `fetch` streams, jsdom included) until `signal` aborts: connects, hands each event to
 * `onEvent`, and connects again after a wait (`retryMs`, longer after each attempt without an
 * event) when the stream ends, fails, or answers 404 (a chat not created yet). Every connection starts with the chat's current state, so an event
 * missed while disconnected is never lost: the next connection's first event carries it.
 */
export function followChatEvents(options: FollowChatEventsOptions): ChatEventsFollower {
  const { url, onEvent, signal } = options;
  const firstRetryMs = options.retryMs ?? 2_000;
  const maxRetryMs = Math.max(firstRetryMs, 15_000);
  let retryMs = firstRetryMs;
  let wake: (() => void) | undefined;
  const pause = (): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, retryMs);
      signal.addEventListener('abort', done, { once: true });
      wake = done;
    });
  const connect = async (): Promise<void> => {
    const response = await fetch(url, { signal, headers: { accept: 'text/event-stream' } });
    if (!response.ok || response.body === null) {
      await response.body?.cancel();
      return;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      const taken = takeEvents(buffer + value);
      buffer = taken.rest;
      for (const data of taken.data) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(data);
        } catch {
          continue;
        }
        if (isChatEvent(parsed)) {
          retryMs = firstRetryMs;
          onEvent(parsed);
        }
      }
    }
  };
  void (async () => {
    while (!signal.aborted) {
      try {
        await connect();
      } catch {
        // A dropped connection or an unreachable server: connect again after the wait.
      }
      if (!signal.aborted) {
        await pause();
        retryMs = Math.min(maxRetryMs, retryMs * 2);
      }
    }
  })();
  return {
    retryNow() {
      retryMs = firstRetryMs;
      wake?.();
    },
  };
}
