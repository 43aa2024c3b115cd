import type { PruneResult } from '@ctxgraph/fragments-core';
import { activeBranchAfterPrune, type PreparedPrune } from '@ctxgraph/fragments-core/store-kit';
import type { SqliteConnection } from './connection';
import { requireChat } from './lookups';
import { forgetNodes, lowerIndexedSequence } from './search-index';

/**
 * `prune` in one `BEGIN IMMEDIATE` transaction, so it is serialized with every other write, in
 * this process and in others: a writer sees the chat before or after, never half pruned. The
 * reachable nodes are walked from every pointer that stays (branch heads not being deleted,
 * checkpoints; UNION stops a walk where another already went), and everything else in the chat
 * goes. That set is closed under descendants, so no node loses its parent. The search index
 * forgets the deleted nodes in the same transaction.
 */
export function prune(db: SqliteConnection, input: PreparedPrune): PruneResult {
  return db.run('prune(input)', () =>
    db.write(() => {
      const t = db.tables;
      const chat = requireChat(db, input.chatId);
      const names = db
        .statement(`SELECT name FROM ${t.branches} WHERE chat_id = ?`)
        .pluck()
        .all(input.chatId) as string[];
      const activeBranch = activeBranchAfterPrune(input, chat.active_branch, names);
      const parameters = { chatId: input.chatId, deleted: JSON.stringify(input.deleteBranches) };
      const reachable = `WITH RECURSIVE pointers (id) AS (
          SELECT head_message_id FROM ${t.branches}
           WHERE chat_id = @chatId AND head_message_id IS NOT NULL
             AND name NOT IN (SELECT value FROM json_each(@deleted))
          UNION
          SELECT message_id FROM ${t.checkpoints} WHERE chat_id = @chatId
        ), reach (id, parent_id) AS (
          SELECT m.id, m.parent_id FROM pointers p JOIN ${t.messages} m ON m.chat_id = @chatId AND m.id = p.id
          UNION
          SELECT m.id, m.parent_id FROM reach r JOIN ${t.messages} m ON m.chat_id = @chatId AND m.id = r.parent_id
        )`;
      const counted = db
        .statement(
          `${reachable}
           SELECT count(*) AS nodes, coalesce(sum(length(CAST(payload AS BLOB))), 0) AS bytes
             FROM ${t.messages} WHERE chat_id = @chatId AND id NOT IN (SELECT id FROM reach)`,
        )
        .get(parameters) as { nodes: number; bytes: number };
      const result: PruneResult = {
        chatId: input.chatId,
        dryRun: input.dryRun,
        nodes: counted.nodes,
        bytes: counted.bytes,
        branches: input.deleteBranches,
        activeBranch,
      };
      if (input.dryRun || (counted.nodes === 0 && input.deleteBranches.length === 0)) return result;
      db.statement(
        `DELETE FROM ${t.branches} WHERE chat_id = @chatId AND name IN (SELECT value FROM json_each(@deleted))`,
      ).run(parameters);
      forgetNodes(db, input.chatId, 'm.id NOT IN (SELECT id FROM reach)', parameters, reachable);
      db.statement(
        `${reachable}
         DELETE FROM ${t.messages} WHERE chat_id = @chatId AND id NOT IN (SELECT id FROM reach)`,
      ).run(parameters);
      lowerIndexedSequence(db, input.chatId);
      db.statement(
        `UPDATE ${t.chats} SET active_branch = ?, updated_at = MAX(updated_at, ?) WHERE id = ?`,
      ).run(activeBranch, Date.now(), input.chatId);
      return result;
    }),
  );
}
