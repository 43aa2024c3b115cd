import { StoreError, ValidationError } from '../../errors/errors';
import { assertIdentifier } from '../../rules/identifiers';
import type { ChatChangeListener } from '../live-replies';
import type { ContextStoreDriver } from './context-store-driver';
import { WATCH_CHAT_CALL } from './store-methods';

// `watchChat` of `CheckedContextStore`, the one contract method that answers synchronously (it
// returns the unsubscribe function), so it cannot go through the wrapper's promise-based calls:
// the same rules, applied here (refused once closed, input checked, errors mapped).

/** What the wrapper lends `watchChat`. */
export interface WatchChatWrapper {
  readonly driver: ContextStoreDriver;
  /** Maps an error as the wrapper does. */
  readonly toError: (error: unknown) => Error;
  /** True once `close()` was called. */
  readonly closed: () => boolean;
}

/**
 * The store's `watchChat` over the driver's. Only for a driver that declares
 * `capabilities.liveReplies` (and so has the method).
 */
export function checkedWatchChat(
  wrapper: WatchChatWrapper,
): (chatId: string, listener: ChatChangeListener) => () => void {
  const { driver } = wrapper;
  const watchChat = driver.watchChat;
  if (typeof watchChat !== 'function')
    throw new StoreError(`${driver.name}: capabilities.liveReplies without watchChat().`);
  const label = WATCH_CHAT_CALL.label;
  return (chatId, listener) => {
    if (wrapper.closed()) throw new StoreError(`${label}: this ${driver.name} is closed.`);
    assertIdentifier(label, 'chatId', chatId);
    if (typeof listener !== 'function') {
      throw new ValidationError(`${label}: listener must be a function.`, {
        issues: [{ path: 'listener', message: 'expected a function' }],
      });
    }
    let unsubscribe: unknown;
    try {
      unsubscribe = watchChat.call(driver, chatId, listener);
    } catch (error) {
      throw wrapper.toError(error);
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
  };
}
