// The Worker of the Durable Object benchmark (durable-object-bench.ts bundles it and runs it in
// workerd through miniflare). One SQLite-backed object holds every chat the benchmark uses; each
// request runs one measured way `n` times in a row and answers when done, so the Node side can
// time the request from outside (inside workerd, the clocks only move on I/O).
import { assistantText, message, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import {
  DurableObjectContextStore,
  type DurableObjectStorageLike,
} from '@ctxgraph/store-durable-object';
import { random, scriptedTurn } from './scripted-conversation.ts';

/** The chats each benchmark uses, all in the one object. */
const CHATS = {
  save: 'saves',
  commit: 'commits',
  append: 'appends',
  floor: 'floor',
  cold: 'cold',
} as const;
const USER = 'bench-user';
const renderer = new XmlRenderer();

/** What a Durable Object's constructor is given, as far as this object uses it. */
interface ObjectState {
  readonly storage: DurableObjectStorageLike & {
    readonly sql: DurableObjectStorageLike['sql'] & { readonly databaseSize: number };
  };
}

interface BenchEnv {
  readonly BENCH: {
    idFromName(name: string): unknown;
    get(id: unknown): { fetch(request: Request): Promise<Response> };
  };
}

/** One turn as a commit batch (a user message and a reply), ids derived from `tag`. */
function turnBatch(tag: string) {
  const question = `${tag}-user`;
  const reply = `${tag}-reply`;
  return [
    {
      id: question,
      message: { id: question, role: 'user', parts: [{ type: 'text', text: `question ${tag}` }] },
    },
    {
      id: reply,
      message: {
        id: reply,
        role: 'assistant',
        parts: [{ type: 'text', text: `answer ${tag}, a few words long` }],
      },
    },
  ];
}

/** A chat of `size` alternating user / assistant messages, written in large commits. */
async function seed(store: DurableObjectContextStore, chatId: string, size: number): Promise<void> {
  const opened = await store.openChat({ chatId, userId: USER });
  let head = opened.branch.headMessageId;
  for (let start = 0; start < size; start += 500) {
    const messages = [];
    for (let index = start; index < Math.min(size, start + 500); index += 1) {
      const id = `${chatId}-seed-${index}`;
      const speaker = index % 2 === 0 ? 'user' : 'assistant';
      const text = `${speaker} message number ${index} with a little text`;
      messages.push({ id, message: { id, role: speaker, parts: [{ type: 'text', text }] } });
    }
    const result = await store.commit({ chatId, branch: 'main', expectedHeadId: head, messages });
    head = result.headMessageId;
  }
}

/** The object: the store, an engine kept warm for the per-turn saves, and the bare floors. */
export class BenchObject {
  readonly #storage: ObjectState['storage'];
  readonly #store: DurableObjectContextStore;
  #engine: ContextEngine | undefined;
  #commitHead: string | null = null;
  #floorHead: string | null = null;
  #turns = 0;
  #history = 0;

  constructor(state: ObjectState) {
    this.#storage = state.storage;
    this.#store = new DurableObjectContextStore(state.storage);
  }

  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const n = Number(url.searchParams.get('n') ?? 1);
    switch (url.pathname) {
      case '/setup':
        return Response.json(await this.#setup(Number(url.searchParams.get('history'))));
      case '/noop':
        return Response.json({ ran: 0 });
      case '/turn/save':
        return Response.json({ ran: await this.#repeat(n, () => this.#save()) });
      case '/turn/commit':
        return Response.json({ ran: await this.#repeat(n, () => this.#commit()) });
      case '/turn/floor':
        return Response.json({ ran: await this.#repeat(n, async () => this.#floorTurn()) });
      case '/turn/append':
        return Response.json({ ran: await this.#repeat(n, () => this.#append()) });
      case '/cold/store':
        return Response.json({ ran: await this.#repeat(n, () => this.#coldStore()) });
      case '/cold/calls':
        return Response.json({ ran: await this.#repeat(n, () => this.#coldCalls()) });
      case '/cold/construct':
        return Response.json({ ran: await this.#repeat(n, async () => this.#construct()) });
      case '/cold/floor':
        return Response.json({ ran: await this.#repeat(n, async () => this.#coldFloor()) });
      case '/count':
        return Response.json(await this.#count());
      case '/weight':
        return Response.json(await this.#weight(Number(url.searchParams.get('messages'))));
      default:
        return new Response(`no such benchmark path: ${url.pathname}`, { status: 404 });
    }
  }

  async #repeat(n: number, task: () => Promise<void>): Promise<number> {
    for (let run = 0; run < n; run += 1) await task();
    return n;
  }

  /** Seeds the chats of the turn and cold-read benchmarks (`history` messages each). */
  async #setup(history: number): Promise<{ history: number }> {
    this.#history = history;
    for (const chatId of Object.values(CHATS)) await seed(this.#store, chatId, history);
    this.#commitHead = (
      await this.#store.getHead({ chatId: CHATS.commit, branch: 'main' })
    ).headMessageId;
    this.#floorHead = (
      await this.#store.getHead({ chatId: CHATS.floor, branch: 'main' })
    ).headMessageId;
    this.#engine = new ContextEngine({ store: this.#store, chatId: CHATS.save, userId: USER });
    this.#engine.set(role('You are a benchmark.'));
    await this.#engine.resolve({ renderer });
    return { history };
  }

  /** engine.save of a user message and its reply, on a warm engine. */
  async #save(): Promise<void> {
    const engine = this.#engine;
    if (engine === undefined) throw new Error('call /setup first');
    this.#turns += 1;
    engine.set(user(`question ${this.#turns}`), assistantText(`answer ${this.#turns}`));
    await engine.save();
  }

  /** store.commit of the same two messages, straight on the store. */
  async #commit(): Promise<void> {
    this.#turns += 1;
    const result = await this.#store.commit({
      chatId: CHATS.commit,
      branch: 'main',
      expectedHeadId: this.#commitHead,
      messages: turnBatch(`c${this.#turns}`),
    });
    this.#commitHead = result.headMessageId;
  }

  /** store.append of the same two messages (the write a warm engine's save makes). */
  async #append(): Promise<void> {
    this.#turns += 1;
    await this.#store.append({
      chatId: CHATS.append,
      branch: 'main',
      messages: turnBatch(`a${this.#turns}`),
    });
  }

  /**
   * The floor of a turn, by hand on the same tables, doing the work the store's commit must do
   * and nothing else: one transaction that bumps the chat's revision and takes two sequence
   * numbers (read back from the same statement: the floor keeps no state of the chat in memory,
   * since any store over the storage may write), inserts the two rows, moves the head where it
   * is still the expected one, and returns the written nodes as records.
   */
  #floorTurn(): void {
    this.#turns += 1;
    const { sql } = this.#storage;
    const batch = turnBatch(`f${this.#turns}`);
    this.#storage.transactionSync(() => {
      const now = Date.now();
      const chat = sql
        .exec(
          'UPDATE ctxgraph_chats SET revision = revision + 1, next_sequence = next_sequence + ?, updated_at = ? WHERE id = ? RETURNING revision, next_sequence',
          batch.length,
          now,
          CHATS.floor,
        )
        .toArray()[0];
      if (chat === undefined) throw new Error('floor: no such chat');
      let sequence = Number(chat.next_sequence) - batch.length;
      const expected = this.#floorHead;
      let head = expected;
      const nodes = [];
      for (const entry of batch) {
        const json = JSON.stringify(entry.message);
        sql.exec(
          'INSERT INTO ctxgraph_nodes (chat_id, id, message_id, parent_id, sequence, message, engine_record, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)',
          CHATS.floor,
          entry.id,
          entry.id,
          head,
          sequence,
          json,
          now,
          now,
        );
        nodes.push({ chatId: CHATS.floor, id: entry.id, parentId: head, sequence, json, now });
        sequence += 1;
        head = entry.id;
      }
      const moved = sql
        .exec(
          'UPDATE ctxgraph_branches SET head_message_id = ?, updated_at = ? WHERE chat_id = ? AND name = ? AND head_message_id IS ? RETURNING 1',
          head,
          now,
          CHATS.floor,
          'main',
          expected,
        )
        .toArray();
      if (moved.length !== 1) throw new Error('floor: the head moved');
      this.#floorHead = head;
      return { head, revision: Number(chat.revision), nodes };
    });
  }

  /** A new store object over the same storage, a new engine and its first resolve(). */
  async #coldStore(): Promise<void> {
    const store = new DurableObjectContextStore(this.#storage);
    const engine = new ContextEngine({ store, chatId: CHATS.cold, userId: USER });
    engine.set(role('You are a benchmark.'));
    const { messages } = await engine.resolve({ renderer });
    if (messages.length !== this.#history) throw new Error(`resolved ${messages.length} messages`);
  }

  /**
   * The store calls of a cold read made straight on a new store (no engine): open the chat, read
   * its context lane and the chain in the pages the engine reads (64 nodes, then the rest).
   */
  async #coldCalls(): Promise<void> {
    const store = new DurableObjectContextStore(this.#storage);
    const opened = await store.openChat({ chatId: CHATS.cold, userId: USER });
    await store.getContext(CHATS.cold);
    let cursor = opened.branch.headMessageId;
    let count = 0;
    for (const limit of [64, 1_024]) {
      if (cursor === null) break;
      const page = await store.getChain({ chatId: CHATS.cold, headMessageId: cursor, limit });
      count += page.nodes.length;
      cursor = page.nextCursor;
    }
    if (count !== this.#history) throw new Error(`read ${count} nodes`);
  }

  /** A new store object over the same storage, and nothing else. */
  #construct(): void {
    new DurableObjectContextStore(this.#storage);
  }

  /**
   * The floor of a cold read: the data the store must return, by hand. The chat's owner and
   * active head in one statement, then the chain in one recursive statement with the columns a
   * node record holds (`raw()` arrays), each message and engine record parsed into a record.
   */
  #coldFloor(): void {
    const { sql } = this.#storage;
    const chat = sql
      .exec(
        `SELECT c.user_id AS owner, b.head_message_id AS head FROM ctxgraph_chats c JOIN ctxgraph_branches b
           ON b.chat_id = c.id AND b.name = c.active_branch WHERE c.id = ?`,
        CHATS.cold,
      )
      .toArray()[0];
    if (chat?.owner !== USER) throw new Error('floor: not the chat of this user');
    const nodes = [];
    for (const row of sql
      .exec(
        `WITH RECURSIVE chain (id, parent_id, sequence, message, engine_record, created_at, updated_at, depth) AS (
           SELECT id, parent_id, sequence, message, engine_record, created_at, updated_at, 1
             FROM ctxgraph_nodes WHERE chat_id = ?1 AND id = ?2
           UNION ALL
           SELECT n.id, n.parent_id, n.sequence, n.message, n.engine_record, n.created_at, n.updated_at, chain.depth + 1
             FROM chain JOIN ctxgraph_nodes n ON n.chat_id = ?1 AND n.id = chain.parent_id
         )
         SELECT id, parent_id, sequence, message, engine_record, created_at, updated_at FROM chain ORDER BY depth DESC`,
        CHATS.cold,
        chat.head ?? null,
      )
      .raw()) {
      const record = row[4];
      nodes.push({
        chatId: CHATS.cold,
        id: row[0],
        parentId: row[1],
        sequence: row[2],
        message: JSON.parse(row[3] as string) as unknown,
        engineRecord: record === null ? null : (JSON.parse(record as string) as unknown),
        createdAt: row[5],
        updatedAt: row[6],
      });
    }
    if (nodes.length !== this.#history) throw new Error(`read ${nodes.length} messages`);
  }

  /**
   * The statements each measured way runs, once, over a storage that records them: what the
   * figures above are made of (a warm `engine.save`, a `store.commit`, a cold read).
   */
  async #count(): Promise<Record<string, string[]>> {
    const statements: string[] = [];
    const storage: DurableObjectStorageLike = {
      sql: {
        exec: (query, ...bindings) => {
          statements.push(query.replace(/\s+/g, ' ').slice(0, 120));
          return this.#storage.sql.exec(query, ...bindings);
        },
      },
      transactionSync: (closure) => this.#storage.transactionSync(closure),
    };
    const take = (): string[] => statements.splice(0, statements.length);
    const store = new DurableObjectContextStore(storage);
    const construct = take();
    const engine = new ContextEngine({ store, chatId: CHATS.cold, userId: USER });
    engine.set(role('You are a benchmark.'));
    await engine.resolve({ renderer });
    const coldResolve = take();
    const head = (await store.getHead({ chatId: CHATS.cold, branch: 'main' })).headMessageId;
    take();
    await store.commit({
      chatId: CHATS.cold,
      branch: 'main',
      expectedHeadId: head,
      messages: turnBatch('count-commit'),
    });
    const commit = take();
    engine.set(user('counted question'), assistantText('counted answer'));
    await engine.save();
    const save = take();
    this.#history += 4;
    return { construct, coldResolve, commit, save };
  }

  /**
   * Saves a chat of `messages` messages turn by turn through the engine (the scripted
   * conversation: a tool call in every fifth reply), in this fresh object, and reports the
   * database's size before and after and the bytes of the rows' JSON.
   */
  async #weight(messages: number): Promise<Record<string, number>> {
    const { sql } = this.#storage;
    const before = sql.databaseSize;
    const engine = new ContextEngine({ store: this.#store, chatId: 'weight', userId: USER });
    engine.set(role('You are a benchmark.'));
    await engine.resolve({ renderer });
    const next = random(38);
    for (let turn = 0; turn < messages / 2; turn += 1) {
      const { question, reply } = scriptedTurn(turn, next);
      engine.set(message(question), message(reply));
      await engine.save();
    }
    const after = sql.databaseSize;
    const row = sql
      .exec(
        `SELECT count(*) AS nodes, sum(length(CAST(message AS BLOB))) AS messageBytes,
           sum(coalesce(length(CAST(engine_record AS BLOB)), 0)) AS recordBytes,
           sum(length(CAST(message AS BLOB))) FILTER (WHERE message LIKE '%"role":"user"%') AS userBytes,
           count(*) FILTER (WHERE message LIKE '%"role":"user"%') AS userNodes
         FROM ctxgraph_nodes WHERE chat_id = 'weight'`,
      )
      .toArray()[0] as Record<string, number>;
    return { before, after, ...row };
  }
}

/** The Worker: each request goes to the object named by `?object=` (default `bench`). */
export default {
  fetch(request: Request, env: BenchEnv): Promise<Response> {
    const name = new URL(request.url).searchParams.get('object') ?? 'bench';
    return env.BENCH.get(env.BENCH.idFromName(name)).fetch(request);
  },
};
