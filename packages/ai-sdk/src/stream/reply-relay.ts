import { CtxGraphError } from '@ctxgraph/fragments-core';

/**
 * Reads a reply's stream to its end, whoever reads along, and hands every chunk to each of its
 * followers: the client, the resumable copy. A follower that goes away (a client's disconnect)
 * stops getting chunks and nothing else changes: the reply is still read to its end, and so
 * saved. Followers are added before {@link ReplyRelay.run}; each buffers what it has not read yet.
 *
 * @example
 * ```ts
 * const relay = new ReplyRelay(saved);
 * const client = relay.follow({ onCancel: () => disconnect.abort() });
 * void relay.run();
 * ```
 */
export class ReplyRelay<T> {
  readonly #source: ReadableStream<T>;
  readonly #followers = new Set<ReadableStreamDefaultController<T>>();
  #running = false;

  constructor(source: ReadableStream<T>) {
    this.#source = source;
  }

  /** A new follower: every chunk from the start; `onCancel` when its reader cancels it. */
  follow(options: { onCancel?: () => void } = {}): ReadableStream<T> {
    if (this.#running)
      throw new CtxGraphError('ReplyRelay: a follower joins before run(), so it gets every chunk.');
    let follower!: ReadableStreamDefaultController<T>;
    return new ReadableStream<T>({
      start: (controller) => {
        follower = controller;
        this.#followers.add(controller);
      },
      cancel: () => {
        this.#followers.delete(follower);
        options.onCancel?.();
      },
    });
  }

  /** Reads the source to its end, then closes every follower. Never rejects. */
  async run(): Promise<void> {
    this.#running = true;
    const reader = this.#source.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const follower of this.#followers) {
          try {
            follower.enqueue(value);
          } catch {
            this.#followers.delete(follower);
          }
        }
      }
    } catch {
      // The source is the reply saver's output, which ends with an error chunk rather than fail.
    } finally {
      for (const follower of this.#followers) {
        try {
          follower.close();
        } catch {
          // already closed or cancelled
        }
      }
      this.#followers.clear();
    }
  }
}
