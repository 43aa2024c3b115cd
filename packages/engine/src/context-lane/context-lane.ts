import {
  type ContextFragment,
  type ContextLaneRecord,
  isFragment,
  isMessageFragment,
  type JsonValue,
  ValidationError,
} from '@ctxgraph/fragments-core';
import type { ChatSession } from '../session/chat-session';

/**
 * Turns context fragments into JSON and back, for the stored context lane. A
 * `FragmentSerializer` of `@ctxgraph/serialization` is one (`createSerializer({ types })` adds
 * your own fragment types).
 */
export interface ContextSerializer {
  /** The fragment as JSON; throws when the fragment has no serialized form. */
  fromFragment(fragment: ContextFragment): unknown;
  /** The fragment back from its JSON; throws a `ValidationError` for JSON it does not accept. */
  toFragment(json: unknown): ContextFragment;
}

/**
 * The context lane: the engine's non-message fragments, in order, and its link to the chat's
 * stored lane. The array is never changed in place (every change makes a new one), so an
 * operation keeps exactly the lane it was called with; a `load()` still running makes operations
 * called meanwhile read the lane when they run, since the load will replace it before them.
 */
export class ContextLane {
  #fragments: readonly ContextFragment[] = [];
  /** Changes whenever the lane is replaced (not when `set()` appends to it). */
  #origin: object = {};
  /** `load()` calls not finished yet. */
  #loads = 0;
  /** The stored revision last loaded or saved, or undefined when never. */
  #revision: number | undefined;
  readonly #serializer: ContextSerializer;

  constructor(serializer: ContextSerializer) {
    this.#serializer = serializer;
  }

  /** The fragments now. */
  get fragments(): readonly ContextFragment[] {
    return this.#fragments;
  }

  /** Appends fragments (`set()`). */
  add(fragments: readonly ContextFragment[]): void {
    if (fragments.length > 0) this.#fragments = [...this.#fragments, ...fragments];
  }

  /** Replaces the whole lane (`replaceContext()`), after checking every fragment. */
  replace(fragments: readonly ContextFragment[]): void {
    if (!Array.isArray(fragments)) {
      throw new ValidationError('replaceContext(fragments): fragments must be an array.', {
        issues: [{ path: 'fragments', message: 'expected an array' }],
      });
    }
    fragments.forEach((fragment, index) => {
      if (!isFragment(fragment) || isMessageFragment(fragment)) {
        throw new ValidationError(
          `replaceContext(fragments): fragments[${index}] is not a context fragment (messages go through set()).`,
          { issues: [{ path: `fragments[${index}]`, message: 'expected a non-message fragment' }] },
        );
      }
    });
    this.#fragments = fragments.slice();
    this.#origin = {};
  }

  /**
   * The lane an operation called now sees, to read when it runs: the lane as it is now, or, while
   * a load will change it first, the lane as it is then.
   */
  atCall(): () => readonly ContextFragment[] {
    const fixed = this.#loads > 0 ? null : this.#fragments;
    return () => fixed ?? this.#fragments;
  }

  /** `loadContext()`: the stored lane replaces what was set before the call. */
  load(session: ChatSession): Promise<readonly ContextFragment[]> {
    const origin = this.#origin;
    const setBefore = this.#fragments.length;
    this.#loads += 1;
    return session
      .run(async () => {
        const { store } = session;
        await session.open();
        const lane = await store.getContext(session.chatId);
        const fragments = lane.fragments.map((json, index) => {
          try {
            return this.#serializer.toFragment(json);
          } catch (error) {
            throw new ValidationError(
              `loadContext(): stored context fragment ${index} of chat "${session.chatId}" cannot be read: ${(error as Error).message}`,
              { cause: error },
            );
          }
        });
        // In call order: fragments set after this call stay on top; a replace() after it wins.
        if (this.#origin === origin) {
          this.#fragments = [...fragments, ...this.#fragments.slice(setBefore)];
          this.#origin = {};
        }
        this.#revision = lane.revision;
        return fragments;
      })
      .finally(() => {
        this.#loads -= 1;
      });
  }

  /** `saveContext()`: stores the lane as it is at the call, over the revision last known. */
  save(session: ChatSession): Promise<ContextLaneRecord> {
    const atCall = this.atCall();
    return session.run(async () => {
      const { store } = session;
      const fragments = atCall().map((fragment, index) => {
        try {
          return this.#serializer.fromFragment(fragment) as JsonValue;
        } catch (error) {
          throw new ValidationError(
            `saveContext(): context fragment ${index} ("${fragment.name}") cannot be serialized: ${(error as Error).message}`,
            { cause: error },
          );
        }
      });
      await session.open();
      const saved = await store.saveContext({
        chatId: session.chatId,
        fragments,
        ...(this.#revision === undefined ? {} : { expectedRevision: this.#revision }),
      });
      this.#revision = saved.revision;
      return saved;
    });
  }
}
