import { randomInt } from 'node:crypto';
import {
  MAX_IDENTIFIER_BYTES,
  MAX_IDENTIFIER_LENGTH,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { afterAll, describe, expect, it } from 'vitest';
import {
  adminClient,
  databaseUrl,
  dropSchema,
  randomSchema,
  textNode,
} from './__fixtures__/test-database';
import { PostgresContextStore } from './postgres-context-store';

const admin = adminClient();
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin, schema);
  await admin.end();
});

function freshStore(): PostgresContextStore {
  const schema = randomSchema();
  schemas.push(schema);
  return new PostgresContextStore({ connectionString: databaseUrl(), schema });
}

/**
 * A random identifier of exactly `MAX_IDENTIFIER_BYTES` bytes of UTF-8 from one script: random
 * so that PostgreSQL cannot compress the index entry below its size (it compresses entries
 * larger than 1/16 of a page before checking the B-tree limit).
 */
function largestId(script: 'ascii' | 'cjk' | 'emoji', tag: string): string {
  const pick = (low: number, high: number) => String.fromCodePoint(randomInt(low, high));
  let value = tag;
  const bytes = () => Buffer.byteLength(value, 'utf8');
  const width = script === 'ascii' ? 1 : script === 'cjk' ? 3 : 4;
  while (bytes() + width <= MAX_IDENTIFIER_BYTES) {
    value +=
      script === 'ascii'
        ? pick(0x21, 0x7f)
        : script === 'cjk'
          ? pick(0x4e00, 0x9fff)
          : pick(0x1f300, 0x1f5ff);
  }
  while (bytes() < MAX_IDENTIFIER_BYTES) value += pick(0x30, 0x3a);
  return value;
}

describe('identifier limits (defect 9: ids the shared checks accepted were refused by PostgreSQL)', () => {
  it.each(['ascii', 'cjk', 'emoji'] as const)(
    'ids of exactly %s-script 512 bytes store, index and read back in every table',
    async (script) => {
      const store = freshStore();
      const id = (tag: string) => largestId(script, tag);
      const chatId = id('chat-');
      const userId = id('user-');
      const messages = [id('m1-'), id('m2-'), id('m3-')];
      const branch = id('branch-');
      const checkpoint = id('checkpoint-');
      for (const value of [chatId, userId, branch, checkpoint, ...messages]) {
        expect(Buffer.byteLength(value, 'utf8')).toBe(MAX_IDENTIFIER_BYTES);
      }
      try {
        // chats (primary key, owner index), messages (primary key, parent and chat foreign keys),
        // branches (primary key, head foreign key), checkpoints (primary key, message foreign key).
        await store.openChat({ chatId, userId, title: id('title-') });
        await store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: messages.slice(0, 2).map((messageId) => textNode(messageId)),
        });
        await store.createBranch({
          chatId,
          name: branch,
          headMessageId: messages[0] as string,
          activate: true,
        });
        await store.append({
          chatId,
          branch,
          messages: [textNode(messages[2] as string), textNode(messages[0] as string, 'fixed')],
        });
        await store.createCheckpoint({
          chatId,
          name: checkpoint,
          messageId: messages[2] as string,
        });
        const fork = await store.forkBranch({
          chatId,
          from: 'main',
          headMessageId: messages[1] as string,
        });

        const chain = await store.getChain({ chatId, headMessageId: messages[2] as string });
        expect(chain.nodes.map((node) => node.id)).toEqual([messages[0], messages[2]]);
        expect(await store.getBranch({ chatId, name: branch })).toMatchObject({
          headMessageId: messages[2],
        });
        expect(await store.getCheckpoint({ chatId, name: checkpoint })).toMatchObject({
          messageId: messages[2],
        });
        expect(fork).toMatchObject({ name: 'main-v2', headMessageId: messages[1] });
        const listed = await store.listChats({ userId });
        expect(listed.items.map((chat) => chat.id)).toEqual([chatId]);
        expect((await store.getChat(chatId))?.activeBranch).toBe(branch);
        expect(await store.deleteChat(chatId)).toBe(true);
      } finally {
        await store.close();
      }
    },
  );

  it('512 CJK characters (1,536 bytes) are refused with ValidationError before any SQL runs', async () => {
    const store = freshStore();
    try {
      const tooLong = largestId('cjk', '').slice(0, 1) + '字'.repeat(MAX_IDENTIFIER_LENGTH - 1);
      expect(tooLong).toHaveLength(MAX_IDENTIFIER_LENGTH);
      await store.openChat({ chatId: 'c', userId: 'u' });
      const refusals = [
        store.openChat({ chatId: tooLong, userId: 'u' }),
        store.openChat({ chatId: 'd', userId: tooLong }),
        store.commit({
          chatId: 'c',
          branch: 'main',
          expectedHeadId: null,
          messages: [textNode(tooLong)],
        }),
        store.append({ chatId: 'c', branch: 'main', messages: [textNode(tooLong)] }),
        store.createBranch({ chatId: 'c', name: tooLong, headMessageId: null }),
        store.forkBranch({ chatId: 'c', from: tooLong, headMessageId: null }),
      ];
      for (const refusal of refusals) {
        const error = await refusal.catch((caught: unknown) => caught);
        expect(ValidationError.isInstance(error)).toBe(true);
        expect((error as Error).message).toContain('bytes of UTF-8');
      }
      const graph = await store.getGraph('c');
      expect(graph.nodes).toEqual([]);
      expect(graph.branches.map((branch) => branch.name)).toEqual(['main']);
      expect(await store.getChat('d')).toBeNull();
    } finally {
      await store.close();
    }
  });
});

describe('getChain limit (defect 10: a limit of 2^31 or more failed as an integer overflow)', () => {
  it.each([
    ['2^31', 2 ** 31],
    ['2^32 + 1', 2 ** 32 + 1],
    ['the largest safe integer', Number.MAX_SAFE_INTEGER],
  ])('a limit of %s returns the whole chain', async (_label, limit) => {
    const store = freshStore();
    try {
      await store.openChat({ chatId: 'c', userId: 'u' });
      await store.commit({
        chatId: 'c',
        branch: 'main',
        expectedHeadId: null,
        messages: ['a', 'b', 'c1'].map((id) => textNode(id)),
      });
      const page = await store.getChain({ chatId: 'c', headMessageId: 'c1', limit });
      expect(page.nodes.map((node) => node.id)).toEqual(['a', 'b', 'c1']);
      expect(page.nextCursor).toBeNull();
      const until = await store.getChain({ chatId: 'c', headMessageId: 'c1', until: 'a', limit });
      expect(until).toMatchObject({ nextCursor: null, reachedUntil: true });
      expect(until.nodes.map((node) => node.id)).toEqual(['b', 'c1']);
    } finally {
      await store.close();
    }
  });
});
