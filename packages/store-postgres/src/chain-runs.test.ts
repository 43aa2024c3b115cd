import { type ChatGraph, MessageIdConflictError } from '@ctxgraph/fragments-core';
import { afterAll, describe, expect, it } from 'vitest';
import {
  adminClient,
  databaseUrl,
  dropSchema,
  randomSchema,
  textNode,
} from './__fixtures__/test-database';
import { PostgresContextStore } from './postgres-context-store';

// getChain reads a chain one run at a time (rows whose parent is the row just before them in
// sequence order, see the `chain runs` migration), and commit/append place replaced ids the same
// way. These tests hold both to a plain walk over parent pointers, on random graphs that mix
// appends on many branches, forks anywhere, replacements, and rows written the way the previous
// schema version's store wrote them (no run information), as during a rolling deploy.

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

/** A small deterministic PRNG (mulberry32), so a failure can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** The chain from `head` to the root by parent pointers, oldest first. */
function referenceChain(graph: ChatGraph, head: string): string[] {
  const byId = new Map(graph.nodes.map((node) => [node.id, node]));
  const chain: string[] = [];
  for (let id: string | null = head; id !== null; id = byId.get(id)?.parentId ?? null) {
    chain.push(id);
  }
  return chain.reverse();
}

/** What getChain must return, computed from the reference chain. */
function expectedPage(
  chain: readonly string[],
  until: string | undefined,
  limit: number | undefined,
): { ids: string[]; reachedUntil: boolean; nextCursor: string | null } {
  const untilIndex = until === undefined ? -1 : chain.indexOf(until);
  const walked = chain.slice(untilIndex + 1);
  const ids = limit === undefined ? walked : walked.slice(-limit);
  const oldestIndex = chain.length - ids.length;
  const parent = oldestIndex > 0 ? (chain[oldestIndex - 1] as string) : null;
  // The walk meets `until` only when the limit did not stop it first.
  const reachedUntil = untilIndex >= 0 && oldestIndex === untilIndex + 1;
  const cut = limit !== undefined && ids.length === limit && parent !== null && !reachedUntil;
  return { ids, reachedUntil, nextCursor: cut ? parent : null };
}

/** Inserts a node as the schema-1 store did: no run_start, last_sequence bumped, nothing else. */
async function writeAsPreviousVersion(
  schema: string,
  chatId: string,
  branch: string,
  id: string,
): Promise<void> {
  await admin.begin(async (sql) => {
    const [branchRow] = await sql.unsafe(
      `SELECT head_message_id FROM "${schema}".ctxgraph_branches WHERE chat_id = $1 AND name = $2 FOR NO KEY UPDATE`,
      [chatId, branch],
    );
    const [chat] = await sql.unsafe(
      `UPDATE "${schema}".ctxgraph_chats SET last_sequence = last_sequence + 1, version = version + 1
       WHERE chat_id = $1 RETURNING last_sequence`,
      [chatId],
    );
    await sql.unsafe(
      `INSERT INTO "${schema}".ctxgraph_messages (chat_id, message_id, parent_id, sequence, role, message, created_at, updated_at)
       VALUES ($1, $2, $3, $4, 'user', $5::text::json, 0, 0)`,
      [
        chatId,
        id,
        (branchRow?.head_message_id as string | null) ?? null,
        Number(chat?.last_sequence),
        JSON.stringify({ id, role: 'user', parts: [] }),
      ],
    );
    await sql.unsafe(
      `UPDATE "${schema}".ctxgraph_branches SET head_message_id = $3 WHERE chat_id = $1 AND name = $2`,
      [chatId, branch, id],
    );
  });
}

async function checkEveryBranch(
  store: PostgresContextStore,
  chatId: string,
  next: () => number,
): Promise<void> {
  const graph = await store.getGraph(chatId);
  const ids = graph.nodes.map((node) => node.id);
  for (const branch of graph.branches) {
    if (branch.headMessageId === null) continue;
    const chain = referenceChain(graph, branch.headMessageId);
    const whole = await store.getChain({ chatId, headMessageId: branch.headMessageId });
    expect(whole.nodes.map((node) => node.id)).toEqual(chain);
    expect(whole.nodes).toEqual(chain.map((id) => graph.nodes.find((node) => node.id === id)));
    for (let probe = 0; probe < 3; probe += 1) {
      const until = next() < 0.7 ? ids[Math.floor(next() * ids.length)] : undefined;
      const limit = next() < 0.6 ? 1 + Math.floor(next() * (chain.length + 2)) : undefined;
      const page = await store.getChain({
        chatId,
        headMessageId: branch.headMessageId,
        ...(until === undefined ? {} : { until }),
        ...(limit === undefined ? {} : { limit }),
      });
      const expected = expectedPage(chain, until, limit);
      expect(
        {
          ids: page.nodes.map((node) => node.id),
          reachedUntil: page.reachedUntil,
          nextCursor: page.nextCursor,
        },
        `branch ${branch.name}, until ${until}, limit ${limit}`,
      ).toEqual(expected);
    }
  }
}

describe('chain runs', () => {
  it.each([11, 23, 37, 41, 59])(
    'random graphs (seed %i): every chain, until, limit and off-branch decision matches a parent walk',
    async (seed) => {
      const next = random(seed);
      const store = freshStore();
      const chatId = `chat-${seed}`;
      let counter = 0;
      const fresh = () => {
        counter += 1;
        return `n${counter}`;
      };
      try {
        await store.openChat({ chatId, userId: 'u' });
        const branches = ['main'];
        for (let step = 0; step < 120; step += 1) {
          const roll = next();
          const branch = branches[Math.floor(next() * branches.length)] as string;
          if (roll < 0.45) {
            const batch = Array.from({ length: 1 + Math.floor(next() * 3) }, () =>
              textNode(fresh()),
            );
            if (next() < 0.5) await store.append({ chatId, branch, messages: batch });
            else {
              const { headMessageId } = await store.getHead({ chatId, branch });
              await store.commit({
                chatId,
                branch,
                expectedHeadId: headMessageId,
                messages: batch,
              });
            }
          } else if (roll < 0.6) {
            await writeAsPreviousVersion(store.schema, chatId, branch, fresh());
          } else if (roll < 0.75) {
            const graph = await store.getGraph(chatId);
            const at =
              graph.nodes.length === 0
                ? null
                : (graph.nodes[Math.floor(next() * graph.nodes.length)]?.id ?? null);
            const fork = await store.forkBranch({ chatId, from: branch, headMessageId: at });
            branches.push(fork.name);
          } else {
            // Replace a random existing id: allowed exactly when it is on the branch.
            const graph = await store.getGraph(chatId);
            const target = graph.nodes[Math.floor(next() * graph.nodes.length)];
            if (target === undefined) continue;
            const head = graph.branches.find((entry) => entry.name === branch)?.headMessageId;
            const onBranch =
              head !== null &&
              head !== undefined &&
              referenceChain(graph, head).includes(target.id);
            const attempt = store.append({
              chatId,
              branch,
              messages: [textNode(target.id, `replaced at step ${step}`), textNode(fresh())],
            });
            if (onBranch) {
              const result = await attempt;
              expect(result.nodes[0]).toMatchObject({
                id: target.id,
                parentId: target.parentId,
                sequence: target.sequence,
              });
            } else {
              await expect(attempt).rejects.toThrow(MessageIdConflictError);
              expect((await store.getGraph(chatId)).chat.revision).toBe(graph.chat.revision);
            }
          }
          if (step % 15 === 14) await checkEveryBranch(store, chatId, next);
        }
        await checkEveryBranch(store, chatId, next);
      } finally {
        await store.close();
      }
    },
    60_000,
  );

  it('a branch appended to alone is one run: one span covers the whole chain', async () => {
    const store = freshStore();
    try {
      await store.openChat({ chatId: 'c', userId: 'u' });
      for (let turn = 0; turn < 20; turn += 1) {
        await store.append({
          chatId: 'c',
          branch: 'main',
          messages: [textNode(`q${turn}`), textNode(`a${turn}`, 'a', 'assistant')],
        });
      }
      const rows = await admin.unsafe(
        `SELECT DISTINCT run_start FROM "${store.schema}".ctxgraph_messages WHERE chat_id = 'c'`,
      );
      expect(rows.map((row) => Number(row.run_start))).toEqual([1]);
      // A fork in the middle starts a run of its own; the main chain keeps its run.
      await store.forkBranch({ chatId: 'c', from: 'main', headMessageId: 'a9' });
      await store.append({ chatId: 'c', branch: 'main-v2', messages: [textNode('f1')] });
      await store.append({ chatId: 'c', branch: 'main-v2', messages: [textNode('f2')] });
      await store.append({ chatId: 'c', branch: 'main', messages: [textNode('m1')] });
      const runs = await admin.unsafe(
        `SELECT message_id, run_start FROM "${store.schema}".ctxgraph_messages
         WHERE chat_id = 'c' AND message_id IN ('f1', 'f2', 'm1') ORDER BY sequence`,
      );
      expect(runs.map((row) => [row.message_id, Number(row.run_start)])).toEqual([
        ['f1', 41],
        ['f2', 41],
        ['m1', 43],
      ]);
      const main = await store.getChain({ chatId: 'c', headMessageId: 'm1' });
      expect(main.nodes.map((node) => node.id).slice(-3)).toEqual(['q19', 'a19', 'm1']);
      expect(main.nodes).toHaveLength(41);
      const fork = await store.getChain({ chatId: 'c', headMessageId: 'f2' });
      expect(fork.nodes.map((node) => node.id).slice(-4)).toEqual(['q9', 'a9', 'f1', 'f2']);
      expect(fork.nodes).toHaveLength(22);
    } finally {
      await store.close();
    }
  });

  it('a node written by the previous version after the newest node keeps the next write from continuing its run', async () => {
    const store = freshStore();
    try {
      await store.openChat({ chatId: 'c', userId: 'u' });
      await store.append({ chatId: 'c', branch: 'main', messages: [textNode('a'), textNode('b')] });
      await store.createBranch({ chatId: 'c', name: 'side', headMessageId: 'b' });
      // `b` is still the chat's newest node as far as the chat row knows, but an older store
      // inserts `x` (sequence 3) on `side` without saying so.
      await writeAsPreviousVersion(store.schema, 'c', 'side', 'x');
      const result = await store.append({
        chatId: 'c',
        branch: 'main',
        messages: [textNode('c1')],
      });
      expect(result.nodes[0]).toMatchObject({ parentId: 'b', sequence: 4 });
      const [row] = await admin.unsafe(
        `SELECT run_start FROM "${store.schema}".ctxgraph_messages WHERE chat_id = 'c' AND message_id = 'c1'`,
      );
      expect(Number(row?.run_start)).toBe(4);
      expect(
        (await store.getChain({ chatId: 'c', headMessageId: 'c1' })).nodes.map((node) => node.id),
      ).toEqual(['a', 'b', 'c1']);
    } finally {
      await store.close();
    }
  });
});
