import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { openBackend } from '../server/open-backend';

/**
 * Writes a chat of `count` messages (user and assistant in turn) to the SQLite file, with a side
 * branch a third of the way in and a checkpoint there: the shape a long session leaves. With
 * `forks`, that many more side branches, each with a checkpoint, spread over the chat in pairs a
 * few messages apart (labels that crowd each other when zoomed out). Written through the engine
 * straight into the file, a hundred messages per save: the API's one-message requests would take
 * far longer for 10,000 messages.
 */
export async function seedLongChat(
  path: string,
  count: number,
  options: { forks?: number } = {},
): Promise<{ chatId: string; lastText: string }> {
  const backend = await openBackend({ kind: 'sqlite', path });
  try {
    const chatId = `long-${count}`;
    await backend.store.openChat({ chatId, userId: 'demo-user', title: `${count} messages` });
    const engine = new ContextEngine({ store: backend.store, chatId, userId: 'demo-user' });
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
      const side = new ContextEngine({ store: backend.store, chatId, userId: 'demo-user' });
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
