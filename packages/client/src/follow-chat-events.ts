// A chat's change events (`GET …/:id/events`, server-sent events) read with `fetch`, so it runs
// wherever `fetch` streams (browsers, workers, jsdom, Node) and takes the app's headers, which
// `EventSource` cannot.
import { type ChatEvent, readChatEvent } from './saved-chat';

/** How long to wait before connecting again, doubled after each attempt that got no event. */
export interface RetryOptions {
  /**
   * The first wait, in milliseconds.
   * @default 1000
   */
  readonly initialMs?: number;
  /**
   * The longest wait, in milliseconds.
   * @default 15000
   */
  readonly maxMs?: number;
}

/** Options of {@link followChatEvents}. */
export interface FollowChatEventsOptions {
  /** The chat's events route (`chatRoutes(api).events(chatId)`). */
  readonly url: string;
  /** Told each event, in order. */
  readonly onEvent: (event: ChatEvent) => void;
  /** Ends the following (the page leaves the chat). */
  readonly signal: AbortSignal;
  /**
   * The `fetch` to connect with.
   * @default globalThis.fetch
   */
  readonly fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /**
   * Connect again after the stream ended, failed, or answered 404 (a chat its first turn has not
   * created yet), with a growing wait; `false`: follow one connection only.
   * @default { initialMs: 1000, maxMs: 15000 }
   */
  readonly retry?: RetryOptions | false;
  /**
   * Told once the following ends for good: aborted, or (with `retry: false`) its one connection
   * ended. `error` is the failure that ended it, undefined for an abort, an end or a 404.
   */
  readonly onEnd?: (error?: unknown) => void;
}

/** How the caller reaches a running {@link followChatEvents}. */
export interface ChatEventsFollower {
  /** Connect again now instead of after the wait (the page just created the chat). */
  retryNow(): void;
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
 * Follows a chat's change events until `signal` aborts: connects, hands each event to `onEvent`,
 * and connects again after a wait (`retry`) when the stream ends, fails, or answers 404. Every
 * connection starts with the chat's current state, so an event missed while disconnected is never
 * lost: the next connection's first event carries it.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * followChatEvents({
 *   url: chatRoutes('/api/chat').events('chat-1'),
 *   signal: controller.signal,
 *   onEvent: (event) => console.log(event.version, event.live),
 * });
 * ```
 */
export function followChatEvents(options: FollowChatEventsOptions): ChatEventsFollower {
  const { url, onEvent, signal, retry = {} } = options;
  const send = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const firstWait = retry === false ? 0 : (retry.initialMs ?? 1_000);
  const maxWait = retry === false ? 0 : Math.max(firstWait, retry.maxMs ?? 15_000);
  let wait = firstWait;
  let wake: (() => void) | undefined;
  const pause = (): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, wait);
      signal.addEventListener('abort', done, { once: true });
      wake = done;
    });
  /** One connection, to its end; throws what failed it. */
  const connect = async (): Promise<void> => {
    const response = await send(url, { signal, headers: { accept: 'text/event-stream' } });
    if (response.status === 404) {
      await response.body?.cancel();
      return;
    }
    if (!response.ok || response.body === null) {
      await response.body?.cancel();
      throw new Error(`Following the chat's events failed: ${url} answered ${response.status}.`);
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    const cancel = (): void => {
      reader.cancel().catch(() => {});
    };
    signal.addEventListener('abort', cancel, { once: true });
    try {
      let buffer = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done || signal.aborted) return;
        const taken = takeEvents(buffer + value);
        buffer = taken.rest;
        for (const data of taken.data) {
          const event = readChatEvent(data);
          if (event === undefined) continue;
          wait = firstWait;
          onEvent(event);
          if (signal.aborted) return;
        }
      }
    } finally {
      signal.removeEventListener('abort', cancel);
    }
  };
  void (async () => {
    let failed: unknown;
    while (!signal.aborted) {
      failed = undefined;
      try {
        await connect();
      } catch (error) {
        // A dropped connection, an unreachable server: connect again after the wait.
        failed = signal.aborted ? undefined : error;
      }
      if (retry === false || signal.aborted) break;
      await pause();
      wait = Math.min(maxWait, wait * 2);
    }
    options.onEnd?.(failed);
  })();
  return {
    retryNow() {
      wait = firstWait;
      wake?.();
    },
  };
}
