import type { ChatGraph } from '@ctxgraph/fragments-core';
import { branchRows } from './branch-sql';
import { checkpointRows } from './checkpoint-sql';
import type { SqliteConnection } from './connection';
import { requireChat } from './lookups';
import {
  branchRecord,
  chatRecord,
  checkpointRecord,
  MESSAGE_COLUMNS,
  type MessageRow,
  messageRecord,
} from './rows';

/** The whole graph of a chat, read in one snapshot. */
export function getGraph(db: SqliteConnection, chatId: string): ChatGraph {
  return db.run('getGraph(chatId)', () =>
    db.read(() => {
      const chat = requireChat(db, chatId);
      const nodes = db
        .statement(
          `SELECT ${MESSAGE_COLUMNS} FROM ${db.tables.messages} WHERE chat_id = ? ORDER BY sequence`,
        )
        .all(chatId) as MessageRow[];
      return {
        chat: chatRecord(chat),
        nodes: nodes.map((row) => messageRecord(chatId, row)),
        branches: branchRows(db, chatId).map(branchRecord),
        checkpoints: checkpointRows(db, chatId).map(checkpointRecord),
      };
    }),
  );
}
