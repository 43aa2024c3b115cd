import {
  BranchExistsError,
  BranchNotFoundError,
  ChatNotFoundError,
  CheckpointExistsError,
  HeadConflictError,
  MessageNotFoundError,
  OwnershipError,
  StoreError,
  ValidationError,
} from '@ctxgraph/fragments-core';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDirectory, textMessage } from './__fixtures__/temp-files';
import { SqliteContextStore } from './sqlite-context-store';

const temp = tempDirectory('store');
afterAll(() => temp.remove());

const store = new SqliteContextStore(temp.file('shared.db'));
afterAll(() => store.close());

let chatCounter = 0;
async function freshChat(
  target: SqliteContextStore = store,
): Promise<{ chatId: string; userId: string }> {
  chatCounter += 1;
  const chatId = `chat-${chatCounter}`;
  const userId = `user-${chatCounter}`;
  await target.openChat({ chatId, userId });
  return { chatId, userId };
}

async function append(
  chatId: string,
  ids: string[],
  branch = 'main',
  target: SqliteContextStore = store,
) {
  const head = await target.getHead({ chatId, branch });
  return target.commit({
    chatId,
    branch,
    expectedHeadId: head.headMessageId,
    messages: ids.map((id) => ({ id, message: textMessage(id) })),
  });
}

describe('openChat', () => {
  it('creates a chat with an empty active main branch, then loads it', async () => {
    const created = await store.openChat({
      chatId: 'open-1',
      userId: 'ada',
      title: 'First',
      metadata: { topic: 'x' },
    });
    expect(created.created).toBe(true);
    expect(created.chat).toMatchObject({
      id: 'open-1',
      userId: 'ada',
      title: 'First',
      metadata: { topic: 'x' },
      activeBranch: 'main',
      revision: 0,
      rewrittenAt: 0,
    });
    expect(created.branch).toMatchObject({ chatId: 'open-1', name: 'main', headMessageId: null });
    const loaded = await store.openChat({
      chatId: 'open-1',
      userId: 'ada',
      title: 'ignored for an existing chat',
    });
    expect(loaded.created).toBe(false);
    expect(loaded.chat).toEqual(created.chat);
  });

  it('merges metadata into an existing chat', async () => {
    await store.openChat({ chatId: 'open-2', userId: 'ada', metadata: { keep: 1, change: 'a' } });
    const again = await store.openChat({
      chatId: 'open-2',
      userId: 'ada',
      metadata: { change: 'b', added: null },
    });
    expect(again.chat.metadata).toEqual({ keep: 1, change: 'b', added: null });
  });

  it('says so with a StoreError when the chat names an active branch that does not exist', async () => {
    const path = temp.file();
    const damaged = new SqliteContextStore(path);
    const { chatId, userId } = await freshChat(damaged);
    const database = new Database(path);
    database.prepare(`UPDATE ctxgraph_chats SET active_branch = 'gone' WHERE id = ?`).run(chatId);
    for (const input of [
      { chatId, userId },
      { chatId, userId, metadata: { a: 1 } },
    ]) {
      const error = await damaged.openChat(input).catch((caught: unknown) => caught);
      expect(StoreError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain(
        'names active branch "gone", which does not exist',
      );
    }
    // Another owner is refused first, as for any chat.
    await expect(damaged.openChat({ chatId, userId: 'someone-else' })).rejects.toSatisfy((error) =>
      OwnershipError.isInstance(error),
    );
    expect((await damaged.getChat(chatId))?.metadata).toEqual({});
    database.close();
    await damaged.close();
  });

  it('refuses another owner with OwnershipError and changes nothing', async () => {
    await store.openChat({ chatId: 'open-3', userId: 'ada', metadata: { a: 1 } });
    const before = await store.getChat('open-3');
    await expect(
      store.openChat({ chatId: 'open-3', userId: 'bob', metadata: { a: 2 } }),
    ).rejects.toSatisfy((error) => OwnershipError.isInstance(error));
    expect(await store.getChat('open-3')).toEqual(before);
  });
});

describe('commit', () => {
  it('chains new nodes from the expected head, moves the head and bumps the revision', async () => {
    const { chatId } = await freshChat();
    const first = await append(chatId, ['a', 'b']);
    expect(first).toMatchObject({ headMessageId: 'b', revision: 1, rewrittenAt: 0 });
    expect(first.nodes.map((node) => [node.id, node.parentId, node.sequence])).toEqual([
      ['a', null, 1],
      ['b', 'a', 2],
    ]);
    const second = await append(chatId, ['c']);
    expect(second.nodes[0]).toMatchObject({ id: 'c', parentId: 'b', sequence: 3 });
    expect(await store.getHead({ chatId, branch: 'main' })).toEqual({
      revision: 2,
      headMessageId: 'c',
      rewrittenAt: 0,
    });
  });

  it('refuses a stale head with HeadConflictError carrying the current head, writing nothing', async () => {
    const { chatId } = await freshChat();
    await append(chatId, ['a']);
    const graphBefore = await store.getGraph(chatId);
    const error = await store
      .commit({
        chatId,
        branch: 'main',
        expectedHeadId: null,
        messages: [{ id: 'x', message: textMessage('x') }],
      })
      .catch((caught: unknown) => caught);
    expect(HeadConflictError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ currentHeadId: 'a', expectedHeadId: null });
    expect(await store.getGraph(chatId)).toEqual(graphBefore);
  });

  it('replaces an existing node in place: parent and sequence kept, head kept, rewrittenAt set', async () => {
    const { chatId } = await freshChat();
    await append(chatId, ['a', 'b']);
    const replaced = await store.commit({
      chatId,
      branch: 'main',
      expectedHeadId: 'b',
      messages: [{ id: 'a', message: textMessage('a', 'corrected', 'assistant') }],
    });
    expect(replaced).toMatchObject({ headMessageId: 'b', revision: 2, rewrittenAt: 2 });
    expect(replaced.nodes[0]).toMatchObject({
      id: 'a',
      parentId: null,
      sequence: 1,
      message: textMessage('a', 'corrected', 'assistant'),
    });
    // A replace and new nodes in one call: new ones still chain from the head.
    const mixed = await store.commit({
      chatId,
      branch: 'main',
      expectedHeadId: 'b',
      messages: [
        { id: 'c', message: textMessage('c') },
        { id: 'b', message: textMessage('b', 'edited') },
        { id: 'd', message: textMessage('d') },
      ],
    });
    expect(mixed.nodes.map((node) => [node.id, node.parentId, node.sequence])).toEqual([
      ['c', 'b', 3],
      ['b', 'a', 2],
      ['d', 'c', 4],
    ]);
    expect(mixed).toMatchObject({ headMessageId: 'd', revision: 3, rewrittenAt: 3 });
  });

  it('scopes message ids per chat', async () => {
    const one = await freshChat();
    const two = await freshChat();
    await append(one.chatId, ['same']);
    await append(two.chatId, ['same']);
    expect((await store.getMessage({ chatId: two.chatId, messageId: 'same' }))?.sequence).toBe(1);
  });

  it('refuses malformed input with ValidationError before writing', async () => {
    const { chatId } = await freshChat();
    const bad = [
      { chatId, branch: 'main', expectedHeadId: null, messages: [] },
      {
        chatId,
        branch: 'main',
        expectedHeadId: null,
        messages: [{ id: 'a', message: textMessage('') }],
      },
      {
        chatId,
        branch: 'main',
        expectedHeadId: null,
        messages: [{ id: 'a', message: { id: 'a', role: 'user', parts: [Number.NaN] } }],
      },
      {
        chatId,
        branch: '',
        expectedHeadId: null,
        messages: [{ id: 'a', message: textMessage('a') }],
      },
    ];
    for (const input of bad) {
      await expect(store.commit(input as never)).rejects.toSatisfy((error) =>
        ValidationError.isInstance(error),
      );
    }
    expect((await store.getGraph(chatId)).nodes).toEqual([]);
  });
});

describe('getChain', () => {
  it('walks back oldest first, stops before until, pages with limit and cursor', async () => {
    const { chatId } = await freshChat();
    const ids = Array.from({ length: 7 }, (_, index) => `n${index}`);
    await append(chatId, ids);
    const whole = await store.getChain({ chatId, headMessageId: 'n6' });
    expect(whole).toMatchObject({ nextCursor: null, reachedUntil: false });
    expect(whole.nodes.map((node) => node.id)).toEqual(ids);

    const tail = await store.getChain({ chatId, headMessageId: 'n6', until: 'n3' });
    expect(tail.nodes.map((node) => node.id)).toEqual(['n4', 'n5', 'n6']);
    expect(tail).toMatchObject({ nextCursor: null, reachedUntil: true });

    const pages: string[][] = [];
    let cursor: string | null = 'n6';
    while (cursor !== null) {
      const page = await store.getChain({ chatId, headMessageId: cursor, limit: 3 });
      pages.push(page.nodes.map((node) => node.id));
      cursor = page.nextCursor;
    }
    expect(pages).toEqual([['n4', 'n5', 'n6'], ['n1', 'n2', 'n3'], ['n0']]);

    // The limit ends exactly where until starts: no cursor, until reached.
    expect(
      await store.getChain({ chatId, headMessageId: 'n6', until: 'n3', limit: 3 }),
    ).toMatchObject({ nextCursor: null, reachedUntil: true });
    expect(await store.getChain({ chatId, headMessageId: 'n3', until: 'n3' })).toEqual({
      nodes: [],
      nextCursor: null,
      reachedUntil: true,
    });
    // An until that is not on the chain walks to the root.
    expect(await store.getChain({ chatId, headMessageId: 'n2', until: 'n5' })).toMatchObject({
      reachedUntil: false,
      nextCursor: null,
    });
  });

  it('returns each node exactly as a single-node read does, whatever its ids and JSON hold', async () => {
    // The chain statement hands each node to JavaScript as one JSON text built by SQLite: ids
    // that JSON must escape, an engine record, metadata and text with brackets and commas.
    const { chatId } = await freshChat();
    const ids = [
      'q"uote\\back',
      '__proto__',
      'ctl\u0001\u001f\ttab\nline',
      '],[",',
      'ünïcødé-💬-\u2028-中文',
    ];
    await store.commit({
      chatId,
      branch: 'main',
      expectedHeadId: null,
      messages: ids.map((id, index) => ({
        id,
        message: {
          ...textMessage(id, `text "${index}"], [{}`, index % 2 === 0 ? 'user' : 'assistant'),
          metadata: { nested: { list: [1, '2', null, { id }] } },
        },
        ...(index === 3 ? { engineRecord: { usage: { inputTokens: 3, outputTokens: 4 } } } : {}),
      })),
    });
    const chain = await store.getChain({ chatId, headMessageId: ids[4] as string });
    expect(chain.nodes.map((node) => node.id)).toEqual(ids);
    for (const node of chain.nodes) {
      expect(node).toEqual(await store.getMessage({ chatId, messageId: node.id }));
    }
    expect(chain.nodes[3]?.engineRecord).toEqual({ usage: { inputTokens: 3, outputTokens: 4 } });
    expect(chain.nodes[0]?.parentId).toBeNull();
    expect(chain.nodes[1]?.parentId).toBe(ids[0]);
    // A page that stops inside the chain names its oldest node's parent as the cursor.
    const page = await store.getChain({ chatId, headMessageId: ids[4] as string, limit: 2 });
    expect(page.nodes.map((node) => node.id)).toEqual(ids.slice(3));
    expect(page.nextCursor).toBe(ids[2]);
  });

  it('reports a stored node whose JSON is damaged as a StoreError and reads nothing askew', async () => {
    const path = temp.file();
    const damaged = new SqliteContextStore(path);
    const { chatId } = await freshChat(damaged);
    await append(chatId, ['a', 'b', 'c'], 'main', damaged);
    const database = new Database(path);
    const corrupt = (column: string, text: string) =>
      database
        .prepare(`UPDATE ctxgraph_messages SET ${column} = ? WHERE chat_id = ? AND id = 'b'`)
        .run(text, chatId);
    // A payload that is not one JSON value cannot be written: the versions index reads its id.
    expect(() => corrupt('payload', '{"id":"b","role":"user","parts":[]}, {"extra":true}')).toThrow(
      /malformed JSON/,
    );
    // An engine record can: two JSON values where one belongs (the row would parse with a value
    // too many), and one cut short.
    for (const text of ['{}, 1', '{"usage":']) {
      corrupt('engine_record', text);
      const error = await damaged
        .getChain({ chatId, headMessageId: 'c' })
        .catch((caught: unknown) => caught);
      expect(StoreError.isInstance(error)).toBe(true);
    }
    corrupt('engine_record', '{}');
    expect((await damaged.getChain({ chatId, headMessageId: 'c' })).nodes[1]?.engineRecord).toEqual(
      {},
    );
    // The nodes after it still read one by one.
    expect((await damaged.getChain({ chatId, headMessageId: 'c', until: 'b' })).nodes).toHaveLength(
      1,
    );
    database.close();
    await damaged.close();
  });

  it('throws MessageNotFoundError for a missing head and ChatNotFoundError for a missing chat', async () => {
    const { chatId } = await freshChat();
    await expect(store.getChain({ chatId, headMessageId: 'nope' })).rejects.toSatisfy((error) =>
      MessageNotFoundError.isInstance(error),
    );
    await expect(store.getChain({ chatId: 'no-chat', headMessageId: 'nope' })).rejects.toSatisfy(
      (error) => ChatNotFoundError.isInstance(error),
    );
    await expect(store.getChain({ chatId, headMessageId: 'x', limit: 0 })).rejects.toSatisfy(
      (error) => ValidationError.isInstance(error),
    );
  });

  it('reads 10,000 nodes in one statement, and a commit runs only its own writes', async () => {
    const statements: string[] = [];
    const database = new Database(temp.file(), { verbose: (sql) => statements.push(String(sql)) });
    database.pragma('journal_mode = WAL');
    const traced = new SqliteContextStore({ database });
    const { chatId } = await freshChat(traced);
    const ids = Array.from({ length: 10_000 }, (_, index) => `m${index}`);
    for (let start = 0; start < ids.length; start += 1000)
      await append(chatId, ids.slice(start, start + 1000), 'main', traced);

    statements.length = 0;
    const chain = await traced.getChain({ chatId, headMessageId: 'm9999' });
    expect(chain.nodes).toHaveLength(10_000);
    expect(chain.nodes[0]?.id).toBe('m0');
    expect(chain.nodes[9999]?.parentId).toBe('m9998');
    expect(statements).toHaveLength(1);
    expect(statements[0]).toContain('WITH RECURSIVE');

    statements.length = 0;
    await traced.commit({
      chatId,
      branch: 'main',
      expectedHeadId: 'm9999',
      messages: [
        { id: 'u', message: textMessage('u') },
        { id: 'r', message: textMessage('r', 'reply', 'assistant') },
      ],
    });
    const kinds = statements.map((sql) => sql.trim().split(/\s+/)[0]?.toUpperCase());
    // BEGIN, head read, two inserts, head move, revision bump, COMMIT: nothing proportional to history.
    expect(kinds).toEqual(['BEGIN', 'SELECT', 'INSERT', 'INSERT', 'UPDATE', 'UPDATE', 'COMMIT']);
    await traced.close();
    expect(database.open).toBe(true);
    database.close();
  });

  it("a new handle's first read: the schema check (two reads), then openChat and the chain, one statement each", async () => {
    const path = temp.file();
    const seeding = new SqliteContextStore(path);
    const { chatId, userId } = await freshChat(seeding);
    await append(chatId, ['a', 'b', 'c'], 'main', seeding);
    await seeding.close();

    const statements: string[] = [];
    const database = new Database(path, { verbose: (sql) => statements.push(String(sql)) });
    statements.length = 0;
    // Tables already at the current version: the check reads it and writes nothing.
    const fresh = new SqliteContextStore({ database });
    expect(statements).toHaveLength(2);
    expect(statements.every((sql) => sql.trim().toUpperCase().startsWith('SELECT'))).toBe(true);
    statements.length = 0;
    const opened = await fresh.openChat({ chatId, userId });
    const chain = await fresh.getChain({
      chatId,
      headMessageId: opened.branch.headMessageId ?? '',
    });
    expect(chain.nodes.map((node) => node.id)).toEqual(['a', 'b', 'c']);
    expect(statements).toHaveLength(2);
    expect(statements[1]).toContain('WITH RECURSIVE');
    await fresh.close();
    database.close();
  });
});

describe('branches and checkpoints', () => {
  it('creates, activates, lists and refuses taken or missing names', async () => {
    const { chatId, userId } = await freshChat();
    await append(chatId, ['a', 'b']);
    const fork = await store.createBranch({
      chatId,
      name: 'main-v2',
      headMessageId: 'a',
      activate: true,
    });
    expect(fork).toMatchObject({ name: 'main-v2', headMessageId: 'a' });
    expect((await store.openChat({ chatId, userId })).branch.name).toBe('main-v2');
    await append(chatId, ['c'], 'main-v2');
    expect(
      (await store.getChain({ chatId, headMessageId: 'c' })).nodes.map((node) => node.id),
    ).toEqual(['a', 'c']);
    await expect(
      store.createBranch({ chatId, name: 'main', headMessageId: null }),
    ).rejects.toSatisfy((error) => BranchExistsError.isInstance(error));
    await expect(
      store.createBranch({ chatId, name: 'x', headMessageId: 'nope' }),
    ).rejects.toSatisfy((error) => MessageNotFoundError.isInstance(error));
    await expect(store.setActiveBranch({ chatId, name: 'nope' })).rejects.toSatisfy((error) =>
      BranchNotFoundError.isInstance(error),
    );
    await store.setActiveBranch({ chatId, name: 'main' });
    expect((await store.getChat(chatId))?.activeBranch).toBe('main');
    expect((await store.listBranches(chatId)).map((branch) => branch.name)).toEqual([
      'main',
      'main-v2',
    ]);
    expect(await store.getBranch({ chatId, name: 'nope' })).toBeNull();
  });

  it('names nodes with checkpoints, refuses a taken name unless replace, deletes', async () => {
    const { chatId } = await freshChat();
    await append(chatId, ['a', 'b']);
    await store.createCheckpoint({ chatId, name: 'mark', messageId: 'a' });
    await expect(
      store.createCheckpoint({ chatId, name: 'mark', messageId: 'b' }),
    ).rejects.toSatisfy((error) => CheckpointExistsError.isInstance(error));
    expect((await store.getCheckpoint({ chatId, name: 'mark' }))?.messageId).toBe('a');
    expect(
      (await store.createCheckpoint({ chatId, name: 'mark', messageId: 'b', replace: true }))
        .messageId,
    ).toBe('b');
    await store.createCheckpoint({ chatId, name: 'second', messageId: 'a' });
    expect((await store.listCheckpoints(chatId)).map((checkpoint) => checkpoint.name)).toEqual([
      'mark',
      'second',
    ]);
    expect(await store.deleteCheckpoint({ chatId, name: 'mark' })).toBe(true);
    expect(await store.deleteCheckpoint({ chatId, name: 'mark' })).toBe(false);
    expect(await store.getMessage({ chatId, messageId: 'b' })).not.toBeNull();
  });
});

describe('chats', () => {
  it('updates title and metadata, lists by recency with a cursor, deletes everything a chat owns', async () => {
    const userId = 'lister';
    for (const chatId of ['l1', 'l2', 'l3']) await store.openChat({ chatId, userId });
    const updated = await store.updateChat({
      chatId: 'l1',
      title: 'Renamed',
      metadata: { pinned: true },
    });
    expect(updated).toMatchObject({ title: 'Renamed', metadata: { pinned: true } });
    expect((await store.updateChat({ chatId: 'l1', title: null })).title).toBeNull();
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.listChats({
        userId,
        limit: 2,
        ...(cursor === undefined ? {} : { cursor }),
      });
      seen.push(...page.items.map((chat) => chat.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    expect(seen[0]).toBe('l1');
    expect([...seen].sort()).toEqual(['l1', 'l2', 'l3']);

    await append('l2', ['a', 'b']);
    await store.createCheckpoint({ chatId: 'l2', name: 'c', messageId: 'a' });
    await store.createBranch({ chatId: 'l2', name: 'side', headMessageId: 'a' });
    expect(await store.deleteChat('l2')).toBe(true);
    expect(await store.deleteChat('l2')).toBe(false);
    expect(await store.getChat('l2')).toBeNull();
    const reopened = await store.openChat({ chatId: 'l2', userId: 'someone-else' });
    expect(reopened.created).toBe(true);
    expect((await store.getGraph('l2')).nodes).toEqual([]);
  });

  it('throws ChatNotFoundError from every method on a missing chat', async () => {
    const chatId = 'missing-chat';
    const calls: Array<() => Promise<unknown>> = [
      () => store.updateChat({ chatId, title: 'x' }),
      () => store.getHead({ chatId, branch: 'main' }),
      () =>
        store.commit({
          chatId,
          branch: 'main',
          expectedHeadId: null,
          messages: [{ id: 'a', message: textMessage('a') }],
        }),
      () => store.getChain({ chatId, headMessageId: 'a' }),
      () => store.getMessage({ chatId, messageId: 'a' }),
      () => store.createBranch({ chatId, name: 'b', headMessageId: null }),
      () => store.getBranch({ chatId, name: 'main' }),
      () => store.listBranches(chatId),
      () => store.setActiveBranch({ chatId, name: 'main' }),
      () => store.createCheckpoint({ chatId, name: 'c', messageId: 'a' }),
      () => store.getCheckpoint({ chatId, name: 'c' }),
      () => store.listCheckpoints(chatId),
      () => store.deleteCheckpoint({ chatId, name: 'c' }),
      () => store.getGraph(chatId),
    ];
    for (const call of calls)
      await expect(call()).rejects.toSatisfy((error) => ChatNotFoundError.isInstance(error));
    expect(await store.getChat(chatId)).toBeNull();
    expect(await store.deleteChat(chatId)).toBe(false);
  });
});

describe('odd input', () => {
  it('stores unicode, quotes, SQL-looking and 512-character ids exactly', async () => {
    const oddIds = [
      'chat \'quoted\' "double"',
      'ünïcødé-💬-中文',
      "x'); DROP TABLE ctxgraph_chats; --",
      'z'.repeat(512),
      'tab\tnew\nline',
    ];
    for (const id of oddIds) {
      await store.openChat({ chatId: id, userId: id });
      const result = await store.commit({
        chatId: id,
        branch: 'main',
        expectedHeadId: null,
        messages: [{ id, message: textMessage(id, id) }],
      });
      expect(result.headMessageId).toBe(id);
      await store.createCheckpoint({ chatId: id, name: id, messageId: id });
      expect((await store.getChain({ chatId: id, headMessageId: id })).nodes[0]?.message).toEqual(
        textMessage(id, id),
      );
      expect((await store.listChats({ userId: id })).items.map((chat) => chat.id)).toEqual([id]);
    }
    for (const bad of ['', 'y'.repeat(513), 'nul\u0000byte']) {
      await expect(store.openChat({ chatId: bad, userId: 'u' })).rejects.toSatisfy((error) =>
        ValidationError.isInstance(error),
      );
    }
  });

  it('round-trips a 5 MB message and refuses one above maxMessageBytes with nothing written', async () => {
    const { chatId } = await freshChat();
    const big = textMessage('big', 'é'.repeat(2_500_000));
    await store.commit({
      chatId,
      branch: 'main',
      expectedHeadId: null,
      messages: [{ id: 'big', message: big }],
    });
    expect((await store.getMessage({ chatId, messageId: 'big' }))?.message).toEqual(big);

    const small = new SqliteContextStore({ path: temp.file(), maxMessageBytes: 1000 });
    const own = await freshChat(small);
    const error = await small
      .commit({
        chatId: own.chatId,
        branch: 'main',
        expectedHeadId: null,
        messages: [{ id: 'a', message: textMessage('a', 'x'.repeat(2000)) }],
      })
      .catch((caught: unknown) => caught);
    expect(ValidationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('messages[0].message');
    expect(await small.getHead({ chatId: own.chatId, branch: 'main' })).toEqual({
      revision: 0,
      headMessageId: null,
      rewrittenAt: 0,
    });
    await expect(
      small.updateChat({ chatId: own.chatId, metadata: { blob: 'y'.repeat(2000) } }),
    ).rejects.toSatisfy((caught) => ValidationError.isInstance(caught));
    await small.close();
  });
});

describe('lifecycle and options', () => {
  it('closes only what it opened, is safe to close twice, refuses calls after close', async () => {
    const path = temp.file();
    const owned = new SqliteContextStore({ path });
    await owned.openChat({ chatId: 'c', userId: 'u' });
    await owned.close();
    await owned.close();
    await expect(owned.getChat('c')).rejects.toSatisfy((error) => StoreError.isInstance(error));

    const database = new Database(path);
    {
      await using borrowed = new SqliteContextStore({ database });
      expect((await borrowed.getChat('c'))?.userId).toBe('u');
    }
    expect(database.open).toBe(true);
    database.close();
  });

  it('refuses calls on a database its owner closed, saying so, through the kit', async () => {
    const database = new Database(temp.file());
    const borrowed = new SqliteContextStore({ database });
    await borrowed.openChat({ chatId: 'c', userId: 'u' });
    database.close();
    const error = await borrowed.getChat('c').catch((caught: unknown) => caught);
    expect(StoreError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('called after the database was closed by its owner');
    await expect(borrowed.saveContext({ chatId: 'c', fragments: [] })).rejects.toThrow(
      'saveContext(input) called after the database was closed by its owner',
    );
    await borrowed.close();
  });

  it('serializes to a description without the client', () => {
    const json = JSON.parse(JSON.stringify(store)) as Record<string, unknown>;
    expect(json).toMatchObject({
      store: 'sqlite',
      tablePrefix: 'ctxgraph_',
      ownsDatabase: true,
      closed: false,
    });
    expect(Object.keys(json).sort()).toEqual([
      'closed',
      'ownsDatabase',
      'path',
      'store',
      'tablePrefix',
    ]);
    expect(store.capabilities).toEqual({
      persistent: true,
      multiProcess: true,
      search: true,
      searchPrefix: true,
      retention: true,
      liveReplies: true,
    });
    expect(new SqliteContextStore(':memory:').capabilities).toEqual({
      persistent: false,
      multiProcess: false,
      search: true,
      searchPrefix: true,
      retention: true,
      liveReplies: true,
    });
  });

  it('refuses bad options with ValidationError', () => {
    const bad: unknown[] = [
      '',
      {},
      { path: temp.file(), database: new Database(':memory:') },
      { path: temp.file(), tablePrefix: 'bad-prefix' },
      { path: temp.file(), tablePrefix: 'sqlite_x' },
      { path: temp.file(), tablePrefix: '1x' },
      { path: temp.file(), synchronous: 'OFF' },
      { path: temp.file(), busyTimeout: -1 },
      { path: temp.file(), maxMessageBytes: 0 },
      { path: temp.file(), endedReplyGraceMs: 29_999 },
      { path: temp.file(), endedReplyGraceMs: '60000' },
      { database: { not: 'a database' } },
    ];
    for (const options of bad) {
      expect(() => new SqliteContextStore(options as never)).toThrow(ValidationError);
    }
  });

  it('keeps apps with different table prefixes apart in one file', async () => {
    const path = temp.file();
    const first = new SqliteContextStore({ path, tablePrefix: 'app_one_' });
    const second = new SqliteContextStore({ path, tablePrefix: 'app_two_' });
    await first.openChat({ chatId: 'shared-id', userId: 'ada' });
    expect(await second.getChat('shared-id')).toBeNull();
    expect((await second.openChat({ chatId: 'shared-id', userId: 'bob' })).created).toBe(true);
    await first.close();
    await second.close();
  });
});
