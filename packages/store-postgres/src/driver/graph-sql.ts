import { type ChatGraph, ChatNotFoundError } from '@ctxgraph/fragments-core';
import type { PostgresConnection } from './connection';
import {
  BRANCH_COLUMNS,
  branchFrom,
  CHAT_COLUMNS,
  CHECKPOINT_COLUMNS,
  chatFrom,
  checkpointFrom,
  MESSAGE_COLUMNS,
  messageFrom,
} from './rows';

/** The whole graph of a chat, read from one consistent snapshot. */
export function getGraph(db: PostgresConnection, chatId: string): Promise<ChatGraph> {
  return db.run(() =>
    db.transaction(async (sql) => {
      const names = db.names;
      const chats = await db.query(
        sql,
        `SELECT ${CHAT_COLUMNS} FROM ${names.chats} c WHERE c.chat_id = $1`,
        [chatId],
      );
      if (chats[0] === undefined) throw new ChatNotFoundError(chatId);
      const nodes = await db.query(
        sql,
        `SELECT ${MESSAGE_COLUMNS} FROM ${names.messages} m WHERE m.chat_id = $1 ORDER BY m.sequence`,
        [chatId],
      );
      const branches = await db.query(
        sql,
        `SELECT ${BRANCH_COLUMNS} FROM ${names.branches} b WHERE b.chat_id = $1 ORDER BY b.created_at, b.ordinal`,
        [chatId],
      );
      const checkpoints = await db.query(
        sql,
        `SELECT ${CHECKPOINT_COLUMNS} FROM ${names.checkpoints} k WHERE k.chat_id = $1 ORDER BY k.created_at, k.ordinal`,
        [chatId],
      );
      return {
        chat: chatFrom(chats[0]),
        nodes: nodes.map((row) => messageFrom(row)),
        branches: branches.map((row) => branchFrom(row)),
        checkpoints: checkpoints.map((row) => checkpointFrom(row)),
      };
    }, 'isolation level repeatable read read only'),
  );
}
