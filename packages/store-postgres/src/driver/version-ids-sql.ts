import {
  type PreparedCommitMessage,
  versionNodeIdCandidates,
} from '@ctxgraph/fragments-core/store-kit';
import type { PostgresConnection, Queryable } from './connection';
import { text } from './rows';

/** How many candidate ids one probe checks: the first is free unless versions were removed. */
const PROBE_SIZE = 8;

/** Whether any entry of a write asks for a new version (`newVersion`). */
export function hasNewVersions(messages: readonly PreparedCommitMessage[]): boolean {
  return messages.some((message) => message.newVersion);
}

/**
 * The messages with a node id for each new version (`newVersion`), by the kit's rule
 * (`versionNodeIdCandidates`): the newest node of the message (one probe of the `message
 * versions` expression index, the `->>` of `findMessageNodes`), then the first candidate that no
 * node of the chat and no other entry of the write has. Run it inside the write's transaction
 * after taking the chat row lock: every writer of the chat takes that lock before it inserts,
 * so no one can take the id between this read and the insert, and concurrent writes of versions
 * of one message queue and get distinct ids.
 */
export async function withVersionIds(
  db: PostgresConnection,
  sql: Queryable,
  chatId: string,
  messages: readonly PreparedCommitMessage[],
): Promise<readonly PreparedCommitMessage[]> {
  if (!hasNewVersions(messages)) return messages;
  const names = db.names;
  const taken = new Set(messages.map((message) => message.id));
  const assigned: PreparedCommitMessage[] = [];
  for (const message of messages) {
    if (!message.newVersion) {
      assigned.push(message);
      continue;
    }
    const newest = await db.query(
      sql,
      `SELECT m.message_id FROM ${names.messages} m
       WHERE m.chat_id = $1 AND (m.message ->> 'id') = $2
       ORDER BY m.sequence DESC LIMIT 1`,
      [chatId, message.messageId],
    );
    const candidates = versionNodeIdCandidates(
      message.messageId,
      newest[0] === undefined ? null : text(newest[0][0]),
    );
    let id: string | undefined;
    while (id === undefined) {
      const probe = Array.from({ length: PROBE_SIZE }, () => candidates.next().value);
      const rows = await db.query(
        sql,
        `SELECT m.message_id FROM ${names.messages} m
         WHERE m.chat_id = $1 AND m.message_id = ANY ($2::text[])`,
        [chatId, probe],
      );
      const existing = new Set(rows.map((row) => text(row[0])));
      id = probe.find((candidate) => !taken.has(candidate) && !existing.has(candidate));
    }
    taken.add(id);
    assigned.push({ ...message, id, newVersion: false });
  }
  return assigned;
}
