import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { openBackend } from './open-backend';
import type { StoreChoice } from './playground-config';

/** Options of {@link seedLongChat}. */
export interface SeedOptions {
  /** That many more side branches, each with a checkpoint, in pairs a few messages apart. @default 0 */
  readonly forks?: number;
  /** The chat's owner. @default 'demo-user' */
  readonly userId?: string;
  /**
   * The chat's id (a chat of that id must not exist yet). @default `long-${count}`, or the first
   * of `long-${count}-2`, `long-${count}-3`, … that is free
   */
  readonly chatId?: string;
}

/**
 * Writes a chat of `count` messages (user and assistant in turn) to a store, with a side branch
 * a third of the way in and a checkpoint there: the shape a long session leaves. With `forks`,
 * that many more side branches, each with a checkpoint, spread over the chat in pairs a few
 * messages apart (labels that crowd each other when zoomed out). Written through the engine
 * straight into the store, a hundred messages per save: the API's one-message requests would
 * take far longer for 10,000 messages. Used by the browser tests, the screenshots and the
 * `seed` command.
 *
 * @example
 * ```ts
 * const { chatId } = await seedLongChat({ kind: 'sqlite', path: 'data/playground.db' }, 2000);
 * ```
 */
export async function seedLongChat(
  store: StoreChoice,
  count: number,
  options: SeedOptions = {},
): Promise<{ chatId: string; lastText: string }> {
  if (!Number.isInteger(count) || count < 1) {
    throw new Error(`A seeded chat needs a whole number of messages from 1 on, received ${count}.`);
  }
  const backend = await openBackend(store);
  try {
    let chatId = options.chatId ?? `long-${count}`;
    for (let suffix = 2; options.chatId === undefined; suffix += 1) {
      if ((await backend.store.getChat(chatId)) === null) break;
      chatId = `long-${count}-${suffix}`;
    }
    if (options.chatId !== undefined && (await backend.store.getChat(chatId)) !== null) {
      throw new Error(`A chat "${chatId}" already exists in this store; name a new one.`);
    }
    const userId = options.userId ?? 'demo-user';
    await backend.store.openChat({ chatId, userId, title: `${count} messages` });
    const engine = new ContextEngine({ store: backend.store, chatId, userId });
    const text = (index: number) =>
      index % 2 === 0 ? `Question ${index}: what about case ${index}?` : `Answer ${index}.`;
    const third = Math.floor(count / 3);
    const extra = options.forks ?? 0;
    // Pairs of fork points 4 messages apart, spread evenly (never on the third's own message).
    const forkPoints = new Map<number, string>([[third, 'a-third-in']]);
    for (let fork = 0; fork < extra; fork += 1) {
      const pair = Math.floor(fork / 2);
      const at =
        Math.floor(((pair + 1) * count) / (Math.ceil(extra / 2) + 1)) + (fork % 2) * 4 - 10;
      if (at > 0 && at < count - 1 && !forkPoints.has(at)) forkPoints.set(at, `fork-${fork + 1}`);
    }
    const forks: Array<{ name: string; messageId: string }> = [];
    for (let index = 0; index < count; index += 1) {
      engine.set(index % 2 === 0 ? user(text(index)) : assistantText(text(index)));
      if (index % 100 === 99 || index === count - 1) await engine.save();
      const name = forkPoints.get(index);
      if (name !== undefined) {
        await engine.save();
        const messageId = engine.headMessageId;
        if (messageId) forks.push({ name, messageId });
      }
    }
    for (const { name, messageId } of forks) {
      await backend.store.createCheckpoint({ chatId, name, messageId });
      const side = new ContextEngine({ store: backend.store, chatId, userId });
      await side.rewind(messageId);
      side.set(
        assistantText(
          name === 'a-third-in'
            ? 'Another answer, on a side branch.'
            : `Another answer, on a side branch (${name}).`,
        ),
      );
      await side.save();
      await side.switchBranch('main');
    }
    return { chatId, lastText: text(count - 1) };
  } finally {
    await backend.close();
  }
}
