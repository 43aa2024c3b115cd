import {
  type ContextFragment,
  type HeadState,
  isFragment,
  isLazyFragment,
  isMessageFragment,
  ValidationError,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { lastShownIdWithRole, visibleConversation } from '../compaction/compacted-view';
import { sendableMessages } from '../compaction/provider-parts';
import type { ChatSession } from '../session/chat-session';

/** `set()`'s fragments split by lane, in order, each message with its index among them. */
export interface RoutedFragments {
  readonly messages: Array<{ fragment: ContextFragment; index: number }>;
  readonly context: ContextFragment[];
  /** True when a message is a lazy correction (`lastAssistantMessage()`), bound later. */
  readonly lazy: boolean;
}

/**
 * Splits `set()`'s fragments into messages (for the pending lane) and context; throws, before
 * anything is added, for a value that is not a fragment or a message without a codec.
 */
export function routeFragments(fragments: readonly ContextFragment[]): RoutedFragments {
  const messages: Array<{ fragment: ContextFragment; index: number }> = [];
  const context: ContextFragment[] = [];
  let lazy = false;
  fragments.forEach((fragment, index) => {
    if (!isFragment(fragment)) {
      throw new ValidationError(
        `set(...fragments): fragments[${index}] is not a fragment (expected an object with a string name and data).`,
        { issues: [{ path: `fragments[${index}]`, message: 'expected a fragment' }] },
      );
    }
    if (!isMessageFragment(fragment)) {
      context.push(fragment);
      return;
    }
    if (isLazyFragment(fragment)) lazy = true;
    else if (typeof fragment.codec?.encode !== 'function') {
      throw new ValidationError(
        `set(...fragments): message fragment "${fragment.name}" at fragments[${index}] has no codec; build messages with user(), assistant(), assistantText() or message().`,
        {
          issues: [
            { path: `fragments[${index}].codec`, message: 'message fragments need a codec' },
          ],
        },
      );
    }
    messages.push({ fragment, index });
  });
  return { messages, context, lazy };
}

/**
 * `set()`'s messages: queued on the pending lane in the order given; a lazy correction targets
 * what the caller was looking at, so it is bound after the calls before it have run, from the
 * view they left (or, with no view yet, when first used).
 */
export function addMessages(session: ChatSession, routed: RoutedFragments): void {
  session.pending.add(routed.messages);
  if (routed.lazy) {
    session.run(async (ticket) => {
      if (session.view.loaded) bindLazy(session, ticket);
    });
  }
}

/** Binds the lazy corrections set before `ticket` to the last assistant message the view shows. */
export function bindLazy(session: ChatSession, ticket: number): void {
  session.pending.bind(ticket, () => lastShownIdWithRole(session.view.chain, 'assistant'));
}

/**
 * The saved chain as it shows (a compaction's summary in place of its span) followed by the
 * messages pending before `ticket`, validated, lazy ones resolved in place, provider compaction
 * parts only where the engine recorded one (`sendableMessages`). `opened` is the head
 * state the operation's `open()` just read, if any.
 */
export async function conversation(
  session: ChatSession,
  ticket: number,
  opened: HeadState | undefined,
): Promise<UIMessage[]> {
  await session.view.sync(opened);
  bindLazy(session, ticket);
  const visible = visibleConversation(session.view.chain);
  if (visible.invalid !== undefined && session.settings.onInvalidMessage === 'throw') {
    const entry = visible.invalid;
    throw new ValidationError(
      `Stored message "${entry?.node.id}" of chat "${session.chatId}" no longer validates: ${entry?.error?.message ?? 'invalid'} Pass onInvalidMessage: 'skip' to leave such messages out.`,
      { cause: entry?.error },
    );
  }
  // A fresh list (its messages are frozen): callers may change the array.
  const messages = visible.messages;
  const added = new Map<string, number>();
  for (const message of await session.pending.messages(ticket, session.validator)) {
    const index = visible.position(message.id) ?? added.get(message.id);
    if (index === undefined) {
      added.set(message.id, messages.length);
      messages.push(message);
    } else {
      messages[index] = message;
    }
  }
  // Provider compaction content only from the engine's record, never from a message's parts.
  return sendableMessages(messages, visible.compaction);
}

/** The messages pending before `ticket`, lazy ones bound (after a sync), validated. */
export async function pendingMessages(
  session: ChatSession,
  ticket: number,
  opened: HeadState | undefined,
): Promise<UIMessage[]> {
  await session.view.sync(opened);
  bindLazy(session, ticket);
  return session.pending.messages(ticket, session.validator);
}
