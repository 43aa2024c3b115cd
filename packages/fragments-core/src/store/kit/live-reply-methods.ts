import { StoreError, ValidationError } from '../../errors/errors';
import type { ChatChangeListener } from '../live-replies';
import type { Awaitable, ContextStoreDriver, StoreCall } from './context-store-driver';
import {
  prepareAppendReplyChunks,
  prepareEndReply,
  prepareReadReply,
  prepareStartReply,
  prepareStopReply,
  prepareTakeOverReply,
} from './live-reply-input';
import type { ByteLimit } from './prepare-input';
import { assertIdentifier } from './store-input';

// The live-reply methods of `CheckedContextStore`, installed when the driver declares
// `capabilities.liveReplies`: each checks its input with the shared rules and runs the driver
// under the wrapper's rules (refused once closed, errors mapped, `close()` waits for it).

function call(method: string, argument: string, writes: boolean): StoreCall {
  return Object.freeze({ method, label: `${method}(${argument})`, writes });
}

/** How each live-reply call is named in errors, and whether it writes. */
export const LIVE_REPLY_CALLS: {
  readonly startReply: StoreCall;
  readonly appendReplyChunks: StoreCall;
  readonly readReply: StoreCall;
  readonly getLiveState: StoreCall;
  readonly stopReply: StoreCall;
  readonly takeOverReply: StoreCall;
  readonly endReply: StoreCall;
  readonly watchChat: StoreCall;
} = {
  startReply: call('startReply', 'input', true),
  appendReplyChunks: call('appendReplyChunks', 'input', true),
  readReply: call('readReply', 'input', false),
  getLiveState: call('getLiveState', 'chatId', false),
  stopReply: call('stopReply', 'input', true),
  takeOverReply: call('takeOverReply', 'input', true),
  endReply: call('endReply', 'input', true),
  watchChat: call('watchChat', 'chatId, listener', false),
};

/** The driver methods `capabilities.liveReplies` brings (the wrapper checks they exist). */
export const LIVE_REPLY_METHODS: readonly string[] = Object.keys(LIVE_REPLY_CALLS);

/** What the wrapper lends the live-reply methods. */
export interface LiveReplyWrapper {
  readonly driver: ContextStoreDriver;
  readonly limit: ByteLimit;
  /** Runs a driver call under the wrapper's rules. */
  readonly run: <T>(storeCall: StoreCall, body: () => Awaitable<T>) => Promise<T>;
  /** Maps an error as the wrapper does. */
  readonly toError: (error: unknown, storeCall: StoreCall) => Error;
  /** True once `close()` was called. */
  readonly closed: () => boolean;
}

/**
 * The live-reply methods of a store over `wrapper.driver`, by name, ready to install as own
 * properties. Only call it for a driver that declares `capabilities.liveReplies` (and so has
 * every method).
 */
export function liveReplyMethods(wrapper: LiveReplyWrapper): Record<string, unknown> {
  const { driver, limit, run } = wrapper;
  const method = <K extends keyof typeof LIVE_REPLY_CALLS>(name: K) => {
    const found = driver[name];
    if (typeof found !== 'function')
      throw new StoreError(`${driver.name}: capabilities.liveReplies without ${name}().`);
    return found as (...args: never[]) => unknown;
  };
  const startReply = method('startReply');
  const appendReplyChunks = method('appendReplyChunks');
  const readReply = method('readReply');
  const getLiveState = method('getLiveState');
  const stopReply = method('stopReply');
  const takeOverReply = method('takeOverReply');
  const endReply = method('endReply');
  const watchChat = method('watchChat');
  const calls = LIVE_REPLY_CALLS;
  // Each driver method runs with `this` bound to the driver, as the other calls do.
  const invoke = (body: (...args: never[]) => unknown, argument: unknown): Awaitable<never> =>
    body.call(driver, argument as never) as Awaitable<never>;
  return {
    startReply: (input: Parameters<typeof prepareStartReply>[0]) =>
      run(calls.startReply, () => invoke(startReply, prepareStartReply(input, limit))),
    appendReplyChunks: (input: Parameters<typeof prepareAppendReplyChunks>[0]) =>
      run(calls.appendReplyChunks, () =>
        invoke(appendReplyChunks, prepareAppendReplyChunks(input, limit)),
      ),
    readReply: (input: Parameters<typeof prepareReadReply>[0]) =>
      run(calls.readReply, () => invoke(readReply, prepareReadReply(input))),
    getLiveState: (chatId: string) =>
      run(calls.getLiveState, () => {
        assertIdentifier(calls.getLiveState.label, 'chatId', chatId);
        return invoke(getLiveState, chatId);
      }),
    stopReply: (input: Parameters<typeof prepareStopReply>[0]) =>
      run(calls.stopReply, () => invoke(stopReply, prepareStopReply(input))),
    takeOverReply: (input: Parameters<typeof prepareTakeOverReply>[0]) =>
      run(calls.takeOverReply, () => invoke(takeOverReply, prepareTakeOverReply(input))),
    endReply: (input: Parameters<typeof prepareEndReply>[0]) =>
      run(calls.endReply, () => invoke(endReply, prepareEndReply(input))),
    watchChat: (chatId: string, listener: ChatChangeListener): (() => void) => {
      const label = calls.watchChat.label;
      // Synchronous, unlike the other calls: it returns the unsubscribe function.
      if (wrapper.closed()) throw new StoreError(`${label}: this ${driver.name} is closed.`);
      assertIdentifier(label, 'chatId', chatId);
      if (typeof listener !== 'function') {
        throw new ValidationError(`${label}: listener must be a function.`, {
          issues: [{ path: 'listener', message: 'expected a function' }],
        });
      }
      let unsubscribe: unknown;
      try {
        unsubscribe = watchChat.call(driver, chatId as never, listener as never);
      } catch (error) {
        throw wrapper.toError(error, calls.watchChat);
      }
      if (typeof unsubscribe !== 'function') {
        throw new StoreError(`${label}: ${driver.name} did not return an unsubscribe function.`);
      }
      let done = false;
      return () => {
        if (done) return;
        done = true;
        (unsubscribe as () => void)();
      };
    },
  };
}
