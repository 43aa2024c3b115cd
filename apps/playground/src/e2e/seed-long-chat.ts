import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { openBackend } from '../server/open-backend';

/**
 * Writes a chat of `count` messages (user and assistant in turn) to the SQLite file, with a side
 * branch a third of the way in and a checkpoint there: the shape a long session leaves.
 */
export async function seedLongChat(
  path: string,
  count: number,
): Promise<{ chatId: string; lastText: string }> {
  const backend = await openBackend({ kind: 'sqlite', path });
  try {
    const chatId = `long-${count}`;
    await backend.store.openChat({ chatId, userId: 'demo-user', title: `${count} messages` });
    const engine = new ContextEngine({ store: backend.store, chatId, userId: 'demo-user' });
    const text = (index: number) =>
      index % 2 === 0 ? `Question ${index}: what about case ${index}?` : `Answer ${index}.`;
    let forkAt: string | undefined;
    for (let index = 0; index < count; index += 1) {
      engine.set(index % 2 === 0 ? user(text(index)) : assistantText(text(index)));
      if (index % 100 === 99 || index === count - 1) await engine.save();
      if (index === Math.floor(count / 3)) {
        await engine.save();
        forkAt = engine.headMessageId;
      }
    }
    if (forkAt !== undefined) {
      await backend.store.createCheckpoint({ chatId, name: 'a-third-in', messageId: forkAt });
      const side = new ContextEngine({ store: backend.store, chatId, userId: 'demo-user' });
      await side.rewind(forkAt);
      side.set(assistantText('Another answer, on a side branch.'));
      await side.save();
      await side.switchBranch('main');
    }
    return { chatId, lastText: text(count - 1) };
  } finally {
    await backend.close();
  }
}
