/**
 * Where a chat's active reply stream is kept so that a client that reconnects (a reload, a second
 * tab) can follow it: the slot the AI SDK's resumable-stream guide asks for. One slot per chat.
 *
 * The in-memory {@link createMemoryResumableStreams} serves one process. For several processes,
 * implement it over the `resumable-stream` package and Redis: `publish` stores `streamId` as the
 * chat's active stream (your database, or a Redis key) and calls
 * `context.createNewResumableStream(streamId, () => stream)`; `resume` reads the chat's active
 * stream id and returns `context.resumeExistingStream(streamId)` (null when there is none);
 * `finish` clears the chat's slot when it still names `streamId`.
 */
export interface ResumableStreams {
  /**
   * Keeps the reply's stream (its server-sent-event text, from the first event) under
   * `streamId` and makes it the chat's active stream. Must consume `stream` to its end.
   */
  publish(input: {
    chatId: string;
    streamId: string;
    stream: ReadableStream<string>;
  }): Promise<void>;
  /** The chat's active stream from its first event, or null when no reply is streaming. */
  resume(chatId: string): Promise<ReadableStream<string> | null>;
  /** Clears the chat's slot when it still holds `streamId` (a newer reply may have taken it). */
  finish(input: { chatId: string; streamId: string }): Promise<void>;
}

interface Recording {
  readonly streamId: string;
  readonly events: string[];
  done: boolean;
  readonly listeners: Set<() => void>;
}

/**
 * Resumable streams kept in this process's memory: each active reply's events are kept until it
 * ends, and a resume replays them, then follows the live stream. Fine for one server process.
 *
 * @example
 * ```ts
 * const cycle = createChatCycle({ store, streams: createMemoryResumableStreams() });
 * ```
 */
export function createMemoryResumableStreams(): ResumableStreams {
  const active = new Map<string, Recording>();
  return {
    async publish({ chatId, streamId, stream }) {
      const recording: Recording = { streamId, events: [], done: false, listeners: new Set() };
      active.set(chatId, recording);
      const wake = (): void => {
        for (const listener of recording.listeners) listener();
      };
      const reader = stream.getReader();
      void (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            recording.events.push(value);
            wake();
          }
        } finally {
          recording.done = true;
          wake();
        }
      })();
    },
    async resume(chatId) {
      const recording = active.get(chatId);
      if (recording === undefined || recording.done) return null;
      let index = 0;
      let listener: (() => void) | undefined;
      return new ReadableStream<string>({
        pull(controller) {
          return new Promise<void>((resolve) => {
            const step = (): void => {
              if (index < recording.events.length) {
                controller.enqueue(recording.events[index] as string);
                index += 1;
              } else if (recording.done) {
                controller.close();
              } else {
                return;
              }
              if (listener) recording.listeners.delete(listener);
              listener = undefined;
              resolve();
            };
            listener = step;
            recording.listeners.add(step);
            step();
          });
        },
        cancel() {
          if (listener) recording.listeners.delete(listener);
        },
      });
    },
    async finish({ chatId, streamId }) {
      if (active.get(chatId)?.streamId === streamId) active.delete(chatId);
    },
  };
}
