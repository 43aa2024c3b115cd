import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import { derivedFromChat, queryKeys, refreshChatList } from './query-keys';

describe('queryKeys', () => {
  it("keeps a user's queries apart from another user's, and a chat's under its key", () => {
    expect(queryKeys.chat('ada', 'chat-1')).not.toEqual(queryKeys.chat('bob', 'chat-1'));
    const inspect = queryKeys.inspect('ada', 'chat-1', { renderer: 'xml', modelId: 'gpt-4o' });
    expect(inspect.slice(0, 4)).toEqual([...queryKeys.chat('ada', 'chat-1')]);
  });

  it("marks stale what was read from a chat, not the chat itself nor another chat's", async () => {
    const client = new QueryClient();
    const keys = {
      chat: queryKeys.chat('ada', 'chat-1'),
      compare: queryKeys.compare('ada', 'chat-1', 'main', 'side'),
      deletion: queryKeys.branchDeletion('ada', 'chat-1', 'side', undefined),
      otherChat: queryKeys.inspect('ada', 'chat-2', { renderer: 'xml', modelId: 'm' }),
      otherUser: queryKeys.compare('bob', 'chat-1', 'main', 'side'),
    };
    for (const key of Object.values(keys)) client.setQueryData(key, { read: true });
    await client.invalidateQueries(derivedFromChat('ada', 'chat-1'));
    const stale = Object.entries(keys)
      .filter(([, key]) => client.getQueryState(key)?.isInvalidated)
      .map(([name]) => name);
    expect(stale).toEqual(['compare', 'deletion']);
  });

  it('keeps only the first page of the chat list and reads it again', async () => {
    const client = new QueryClient();
    const key = queryKeys.chatList('ada');
    client.setQueryData(key, { pages: ['page 1', 'page 2'], pageParams: [undefined, 'cursor-2'] });
    await refreshChatList(client, 'ada');
    expect(client.getQueryData(key)).toEqual({ pages: ['page 1'], pageParams: [undefined] });
    expect(client.getQueryState(key)?.isInvalidated).toBe(true);
    expect(client.getQueryData(queryKeys.chatList('bob'))).toBeUndefined();
  });
});
