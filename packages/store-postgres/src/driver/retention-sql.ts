import { ChatNotFoundError, type PruneResult } from '@ctxgraph/fragments-core';
import { activeBranchAfterPrune, type PreparedPrune } from '@ctxgraph/fragments-core/store-kit';
import type { TableNames } from '../schema/table-names';
import { nextSpan } from './chain-spans';
import type { PostgresConnection } from './connection';
import { integer, MAX_ATTEMPTS, text } from './rows';

const statements = new WeakMap<TableNames, string>();

function pruneStatement(names: TableNames): string {
  const cached = statements.get(names);
  if (cached !== undefined) return cached;
  // $1 chat, $2 branches to delete, $3 dry run, $4 the active branch after, $5 now (ms).
  // Reachability as sequence ranges: every pointer that stays (branch heads not being deleted,
  // checkpoints) is walked back one run at a time (see the `chain runs` migration); walks that
  // meet share their spans from there on (UNION drops the repeats). A node is reachable when its
  // sequence lies in a span, so the doomed nodes are one anti-join over the chat's rows. The set
  // is closed under descendants, so deleting it in one statement leaves no dangling parent (the
  // foreign keys are checked at the end of the statement, when the deleted branches are gone too).
  const statement = `WITH RECURSIVE pointers AS (
  SELECT b.head_message_id AS id FROM ${names.branches} b
  WHERE b.chat_id = $1::text AND b.head_message_id IS NOT NULL AND NOT (b.name = ANY ($2::text[]))
  UNION
  SELECT k.message_id FROM ${names.checkpoints} k WHERE k.chat_id = $1::text
), spans AS (
  SELECT h.parent_id, h.sequence, coalesce(h.run_start, h.sequence) AS low
  FROM pointers p CROSS JOIN LATERAL (
    SELECT m.parent_id, m.sequence, m.run_start FROM ${names.messages} m
    WHERE m.chat_id = $1::text AND m.message_id = p.id LIMIT 1
  ) h
  UNION
  SELECT q.parent_id, q.sequence, q.low FROM spans s ${nextSpan(names, '$1::text')}
), reachable AS (
  SELECT DISTINCT generate_series(s.low, s.sequence) AS sequence FROM spans s
), doomed AS (
  SELECT m.message_id, octet_length(m.message::text) AS bytes FROM ${names.messages} m
  WHERE m.chat_id = $1::text AND NOT EXISTS (SELECT 1 FROM reachable r WHERE r.sequence = m.sequence)
), dropped_branches AS (
  DELETE FROM ${names.branches} b
  WHERE NOT $3::boolean AND b.chat_id = $1::text AND b.name = ANY ($2::text[])
  RETURNING 1
), dropped_messages AS (
  DELETE FROM ${names.messages} m USING doomed d
  WHERE NOT $3::boolean AND m.chat_id = $1::text AND m.message_id = d.message_id
  RETURNING 1
), chat AS (
  UPDATE ${names.chats} c SET
    active_branch = $4::text,
    updated_at = greatest(c.updated_at, $5::bigint),
    last_message_id = CASE WHEN c.last_message_id IN (SELECT d.message_id FROM doomed d)
      THEN NULL ELSE c.last_message_id END
  WHERE NOT $3::boolean AND c.chat_id = $1::text
    AND (cardinality($2::text[]) > 0 OR EXISTS (SELECT 1 FROM doomed))
  RETURNING 1
)
SELECT count(*), coalesce(sum(d.bytes), 0),
  (SELECT count(*) FROM dropped_messages), (SELECT count(*) FROM dropped_branches),
  (SELECT count(*) FROM chat)
FROM doomed d`;
  statements.set(names, statement);
  return statement;
}

/**
 * `prune` in one transaction that writers serialize with: it locks the rows of the branches to
 * delete (in name order), then the chat row, the order every write takes them (a commit or
 * append locks its branch row, then the chat row; pointer writes lock the chat row), so it never
 * deadlocks with them. Once it holds the chat row, no pointer can move until it commits, and its
 * next statement sees everything committed before: a head a writer attached to was committed
 * (and so is reachable), and nodes a writer is still inserting are invisible to the delete. A
 * node that a concurrent `createBranch` or `createCheckpoint` made reachable between the read
 * and the delete fails the foreign key and the whole prune runs again.
 */
export function prune(db: PostgresConnection, input: PreparedPrune): Promise<PruneResult> {
  const names = db.names;
  return db.run(async () => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await db.transaction(async (sql) => {
          if (input.deleteBranches.length > 0) {
            await db.query(
              sql,
              `SELECT 1 FROM ${names.branches} b WHERE b.chat_id = $1 AND b.name = ANY ($2::text[])
               ORDER BY b.name COLLATE "C" FOR UPDATE`,
              [input.chatId, input.deleteBranches],
            );
          }
          const chat = await db.query(
            sql,
            `SELECT c.active_branch FROM ${names.chats} c WHERE c.chat_id = $1 FOR NO KEY UPDATE`,
            [input.chatId],
          );
          const row = chat[0];
          if (row === undefined) throw new ChatNotFoundError(input.chatId);
          const branchNames = (
            await db.query(sql, `SELECT b.name FROM ${names.branches} b WHERE b.chat_id = $1`, [
              input.chatId,
            ])
          ).map((branch) => text(branch[0]));
          const activeBranch = activeBranchAfterPrune(input, text(row[0]), branchNames);
          const result = await db.query(sql, pruneStatement(names), [
            input.chatId,
            input.deleteBranches,
            input.dryRun,
            activeBranch,
            Date.now(),
          ]);
          const counts = result[0] ?? [0, 0];
          return {
            chatId: input.chatId,
            dryRun: input.dryRun,
            nodes: integer(counts[0]),
            bytes: integer(counts[1]),
            branches: input.deleteBranches,
            activeBranch,
          };
        });
      } catch (error) {
        // 23503 foreign_key_violation: a pointer moved onto a doomed node meanwhile.
        const code = (error as { code?: unknown } | null)?.code;
        if (code === '23503' && attempt < MAX_ATTEMPTS) continue;
        throw error;
      }
    }
  });
}
