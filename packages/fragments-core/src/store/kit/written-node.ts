import type { EngineRecord, MessageNodeRecord, StoredMessage } from '../records';

/**
 * A node a store has just written, as a later read returns it, for a store's `commit` / `append`
 * result. Its `message` is the written JSON, parsed the first time it is read: callers such as
 * the engine keep their own copy of what they saved, so a batch of 10,000 messages does not pay
 * 10,000 parses nobody looks at. Each read returns the same object. A plain object with an own,
 * enumerable getter, so a spread or a deep equality sees `message` like any other field; one
 * closure per node (an engine record is rare: it comes parsed).
 */
export function writtenNode(
  chatId: string,
  id: string,
  parentId: string | null,
  sequence: number,
  json: string,
  engineRecord: EngineRecord | null,
  createdAt: number,
  updatedAt: number,
): MessageNodeRecord {
  let parsed: StoredMessage | undefined;
  return {
    chatId,
    id,
    parentId,
    sequence,
    get message(): StoredMessage {
      if (parsed === undefined) parsed = JSON.parse(json) as StoredMessage;
      return parsed;
    },
    engineRecord,
    createdAt,
    updatedAt,
  };
}
