import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { tempDirectory } from './__fixtures__/temp-files';
import { SqliteContextStore } from './sqlite-context-store';

const temp = tempDirectory('readme');
afterAll(() => temp.remove());

it('the README example runs as written (with the file in a temp dir)', async () => {
  let chain: string[] = [];
  {
    await using store = new SqliteContextStore(join(temp.path, 'context.db'));

    const { branch } = await store.openChat({ chatId: 'chat-1', userId: 'ada', title: 'Trip' });
    await store.commit({
      chatId: 'chat-1',
      branch: branch.name,
      expectedHeadId: branch.headMessageId,
      messages: [
        {
          id: 'm1',
          message: { id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Where to in May?' }] },
        },
        {
          id: 'm2',
          message: { id: 'm2', role: 'assistant', parts: [{ type: 'text', text: 'Lisbon.' }] },
        },
      ],
    });

    const head = await store.getHead({ chatId: 'chat-1', branch: 'main' });
    const { nodes } = await store.getChain({
      chatId: 'chat-1',
      headMessageId: head.headMessageId!,
    });
    chain = nodes.map((node) => `${node.message.role}: ${node.id}`);
  }
  expect(chain).toEqual(['user: m1', 'assistant: m2']);
});
