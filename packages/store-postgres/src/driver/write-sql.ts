import {
  type AppendResult,
  BranchNotFoundError,
  ChatNotFoundError,
  type CommitResult,
  HeadConflictError,
  LiveReplyConflictError,
  MessageIdConflictError,
  MessageNotFoundError,
  StoreError,
} from '@ctxgraph/fragments-core';
import {
  forkBranchName,
  messageSearchText,
  type PreparedCommitMessage,
  searchTokens,
} from '@ctxgraph/fragments-core/store-kit';
import type { TableNames } from '../schema/table-names';
import {
  type CommitLive,
  commitLiveLost,
  commitLiveParameters,
  commitLiveSql,
} from './commit-live-sql';
import type { PostgresConnection, Queryable } from './connection';
import { clearEndedReply, isLiveReplyTaken } from './live-replies-sql';
import {
  isRetryableRace,
  isUniqueViolationOf,
  MAX_ATTEMPTS,
  optionalText,
  type Parameter,
  type Row,
  text,
  writeResult,
} from './rows';
import { hasNewVersions, withVersionIds } from './version-ids-sql';

/** `commit` checks the head it expects; `append` attaches at the head it finds. */
export type WriteMode = 'commit' | 'append';

/** What `commit` and `append` write: the chat, the branch, the expected head (commit), the messages. */
export interface WriteRequest {
  readonly chatId: string;
  readonly branch: string;
  readonly expectedHeadId: string | null;
  readonly messages: readonly PreparedCommitMessage[];
  /**
   * The messages' search words, for a chat this connection knows is searched ({@link
   * wordsForWrite}, computed in the call that received the messages); undefined otherwise.
   */
  readonly words?: readonly string[] | undefined;
  /**
   * A commit's live reply (`CommitInput.startReply` / `endReply`), written by the same
   * statement; undefined for a plain write.
   */
  readonly live?: CommitLive | undefined;
}

/**
 * Writes the messages and moves the head in ONE statement (so one transaction and one round
 * trip): the branch row is updated only where its head is still `expectedHeadId` (commit) or at
 * whatever head PostgreSQL finds when it takes the branch row lock (append), and every other
 * change in the statement hangs off that update, so a lost race writes nothing. Under READ
 * COMMITTED a writer that waited for the branch row re-checks the head against the committed
 * row, which makes the commit a compare-and-set, and appenders queue on the lock instead of
 * racing. A write with new versions (`newVersion`) runs the statement in a transaction that first
 * takes the branch row lock, then the chat row lock, and allocates their node ids
 * (`withVersionIds`).
 */
export async function write(
  db: PostgresConnection,
  sql: Queryable,
  mode: WriteMode,
  request: WriteRequest,
  maxAttempts: number = MAX_ATTEMPTS,
): Promise<AppendResult> {
  const { chatId, branch, expectedHeadId, messages: prepared } = request;
  const names = db.names;
  // A chat this connection knows is searched comes with its words: the write itself indexes its
  // messages when the index was current just before it or the chat had no message yet (see
  // `indexedWithWrite`); any other pays nothing.
  const { words, live } = request;
  const searched = words !== undefined;
  const statement = writeStatement(names, mode, searched, live?.kind);
  const now = Date.now();
  const liveColumn = searched ? 18 : 17;
  const parametersOf = (messages: readonly PreparedCommitMessage[]): Parameter[] => {
    const parameters: Parameter[] = [
      chatId,
      branch,
      messages.map((message) => message.id),
      messages.map((message) => message.role),
      messages.map((message) => message.json),
      now,
    ];
    if (mode === 'commit') parameters.push(expectedHeadId);
    // The engine records ride in the same statement: one more array, no query of their own.
    parameters.push(messages.map((message) => message.engineRecordJson));
    if (words !== undefined) parameters.push(words as string[]);
    // The live reply's parameters come last, then its columns close the result row.
    if (live !== undefined) parameters.push(...commitLiveParameters(names, live));
    return parameters;
  };
  const parameters = parametersOf(prepared);
  const lockBranch = (transaction: Queryable) =>
    db.query(
      transaction,
      `SELECT 1 FROM ${names.branches} WHERE chat_id = $1 AND name = $2 FOR NO KEY UPDATE`,
      [chatId, branch],
    );
  // New versions get their node ids in a transaction that holds the branch row lock, then the
  // chat row lock (the order of every writer), before the write statement: see `withVersionIds`.
  const versions = hasNewVersions(prepared);
  let written = prepared;
  // Taking the branch lock in a statement of its own first gives the write statement a
  // snapshot that already holds everything committed before the lock was granted.
  let lockFirst = false;
  for (let attempt = 1; ; attempt += 1) {
    let rows: Row[];
    try {
      rows = versions
        ? await db.transaction(async (transaction) => {
            await lockBranch(transaction);
            await db.query(
              transaction,
              `SELECT 1 FROM ${names.chats} WHERE chat_id = $1 FOR NO KEY UPDATE`,
              [chatId],
            );
            written = await withVersionIds(db, transaction, chatId, prepared);
            return db.query(transaction, statement, parametersOf(written));
          })
        : lockFirst
          ? await db.transaction(async (transaction) => {
              await lockBranch(transaction);
              return db.query(transaction, statement, parameters);
            })
          : await db.query(sql, statement, parameters);
    } catch (error) {
      if (live?.kind === 'start' && isLiveReplyTaken(names, error)) {
        // An ended reply of the id (a new start of a saved reply's id) gives way, and the write
        // runs again; a live one is the conflict.
        if (attempt < maxAttempts && (await clearEndedReply(db, sql, chatId, live.replyId)))
          continue;
        throw new LiveReplyConflictError({ chatId, replyId: live.replyId });
      }
      // The existing-id check reads the snapshot the statement started with; another writer
      // may insert the same id meanwhile. Running again sees it and replaces it, or refuses it.
      const raced =
        isUniqueViolationOf(error, `${names.tablePrefix}messages_pkey`) || isRetryableRace(error);
      if (raced && attempt < maxAttempts) continue;
      throw error;
    }
    const first = rows[0] as Row;
    if (first[0] !== null) {
      // What the marks said (null: the chat was never indexed): a chat with marks is searched,
      // and its next save computes its words; one this save indexed is current.
      db.indexHints.marksFound(chatId, first[16] !== null || first[17] === true);
      return writeResult(chatId, written, rows, now);
    }
    // Nothing was written. A reply the commit should end that its owner does not hold comes
    // first; then the locked branch row says which head won.
    if (first[8] !== null) {
      const lost = commitLiveLost(chatId, live, first, liveColumn);
      if (lost !== undefined) throw lost;
      const currentHeadId = optionalText(first[9]);
      if (mode === 'commit' && currentHeadId !== expectedHeadId) {
        throw new HeadConflictError({ chatId, branch, expectedHeadId, currentHeadId });
      }
      if (first[11] === true) {
        // The head was committed after the statement's snapshot was taken, so the walk that
        // places the ids being replaced could not see it: run again, lock first.
        if (attempt >= maxAttempts)
          throw new StoreError(
            `${mode}: the head of branch "${branch}" in chat "${chatId}" kept moving while replacing messages; nothing was written, try again.`,
          );
        lockFirst = mode === 'append';
        continue;
      }
      if (first[10] !== null) {
        throw new MessageIdConflictError({ chatId, branch, messageId: text(first[10]) });
      }
      throw new StoreError(
        `${mode}: PostgreSQL wrote nothing to branch "${branch}" of chat "${chatId}" and did not say why; nothing was written.`,
      );
    }
    // No branch row: a new statement tells a missing chat from a missing branch.
    const state = await db.query(
      sql,
      `SELECT b.name, b.head_message_id FROM ${names.chats} c
       LEFT JOIN ${names.branches} b ON b.chat_id = c.chat_id AND b.name = $2
       WHERE c.chat_id = $1`,
      [chatId, branch],
    );
    const row = state[0];
    if (row === undefined) throw new ChatNotFoundError(chatId);
    const lost = commitLiveLost(chatId, live, first, liveColumn);
    if (lost !== undefined) throw lost;
    if (row[0] === null) throw new BranchNotFoundError(chatId, branch);
    const currentHeadId = optionalText(row[1]);
    if (attempt >= maxAttempts || (mode === 'commit' && currentHeadId !== expectedHeadId)) {
      if (mode === 'commit')
        throw new HeadConflictError({ chatId, branch, expectedHeadId, currentHeadId });
      throw new StoreError(
        `append: branch "${branch}" of chat "${chatId}" kept disappearing and reappearing; nothing was written, try again.`,
      );
    }
    // The branch is there again (the chat was recreated meanwhile): try again.
  }
}

/**
 * A fork-commit (`CommitInput.fork`): in one transaction, takes the chat row lock (every branch
 * is created under it, so the names read next are complete and concurrent fork-commits queue and
 * each gets its own name), checks the start node, inserts the branch at it (activating it when
 * asked), then runs the commit statement on it. Any refusal rolls the branch back with the
 * messages. Lock order: chat row, then the new branch's row, which no one else can hold; other
 * writers take a branch row then the chat row, and never this branch's, so none deadlocks. A
 * race the commit statement would settle by running again (an id inserted meanwhile) aborts the
 * transaction instead, so the whole fork-commit runs again.
 */
export async function forkCommit(
  db: PostgresConnection,
  request: WriteRequest,
  fork: { readonly from: string; readonly activate: boolean },
): Promise<CommitResult> {
  const { chatId, expectedHeadId } = request;
  const names = db.names;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await db.transaction(async (sql) => {
        const now = Date.now();
        await db.lockChat(sql, chatId, now, null);
        const found = await db.query(
          sql,
          `SELECT (SELECT array_agg(b.name) FROM ${names.branches} b WHERE b.chat_id = $1),
             $2::text IS NULL OR EXISTS (SELECT 1 FROM ${names.messages} m WHERE m.chat_id = $1 AND m.message_id = $2::text)`,
          [chatId, expectedHeadId],
        );
        const row = found[0] as Row;
        if (row[1] !== true) throw new MessageNotFoundError(chatId, expectedHeadId as string);
        const name = forkBranchName(fork.from, (row[0] as string[] | null) ?? []);
        // Under the chat row lock taken above, as `withVersionIds` needs.
        const messages = await withVersionIds(db, sql, chatId, request.messages);
        await db.query(
          sql,
          `WITH created AS (
             INSERT INTO ${names.branches} (chat_id, name, head_message_id, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $4)
             RETURNING 1
           )
           UPDATE ${names.chats} c SET active_branch = $2
           WHERE c.chat_id = $1 AND $5 AND EXISTS (SELECT 1 FROM created)`,
          [chatId, name, expectedHeadId, now, fork.activate],
        );
        const { previousHeadId: _previous, ...result } = await write(
          db,
          sql,
          'commit',
          { ...request, branch: name, messages },
          1,
        );
        return { ...result, branch: name };
      });
    } catch (error) {
      const raced =
        isUniqueViolationOf(error, `${names.tablePrefix}messages_pkey`) || isRetryableRace(error);
      if (raced && attempt < MAX_ATTEMPTS) continue;
      throw error;
    }
  }
}

/**
 * The search words of a write's messages, as the index keeps them (space-separated: a word holds
 * no space), for a chat this connection knows is searched (it searched it, a save found its index
 * marks, or a user who searched here opened it); otherwise undefined, and the save pays nothing
 * for search beyond one probe of the marks. Call it in the call that received the messages,
 * before any `await`: it reads the checked message objects, which the caller may change once the
 * call has returned.
 */
export function wordsForWrite(
  db: PostgresConnection,
  chatId: string,
  messages: readonly PreparedCommitMessage[],
): string[] | undefined {
  if (!db.indexHints.searched(chatId)) return undefined;
  return messages.map((entry) => searchTokens(messageSearchText(entry.message)).join(' '));
}

const statements = new WeakMap<TableNames, Map<string, string>>();

/**
 * The write statement of `mode` for these tables, built once per store; `indexed` adds the
 * search words of the new messages (one more array parameter) and the CTEs that write them.
 */
function writeStatement(
  names: TableNames,
  mode: WriteMode,
  indexed: boolean,
  live: CommitLive['kind'] | undefined,
): string {
  let byMode = statements.get(names);
  if (byMode === undefined) {
    byMode = new Map();
    statements.set(names, byMode);
  }
  const key = `${mode}:${indexed}:${live ?? ''}`;
  const cached = byMode.get(key);
  if (cached !== undefined) return cached;
  const headMatches =
    mode === 'commit' ? 'AND l.head_message_id IS NOT DISTINCT FROM $7::text' : '';
  const records = mode === 'commit' ? '$8' : '$7';
  const words = mode === 'commit' ? '$9' : '$8';
  // The marks, read in every write (one primary-key probe): the chat's index was current just
  // before this write when they hold the revision it found, under the chat row lock its `chat`
  // update took (null when the chat was never indexed). The caller learns from them which chats
  // are searched (`IndexHints.marksFound`), so a searched chat's next save brings its words.
  //
  // Indexed with the write (`indexed`: the words came): when the marks were current, or there
  // are none and the chat had no message before this write (`last_sequence` never goes down):
  // the index then lacks exactly what this write writes. A new node's words go in stamped 0; a
  // replaced node's replace its old ones, stamped with its new `rewritten_at` (this version), as
  // a catch-up would. The marks move to (or start at) the write's version and last sequence,
  // never down (a catch-up that read an older snapshot may write its marks meanwhile). Sibling
  // CTEs see one snapshot; the foreign key of the words is checked at the end of the statement,
  // when the messages are in.
  const marks = `, marks AS (
  SELECT s.indexed_version = ch.version - 1 AS current
  FROM chat ch JOIN ${names.searchState} s ON s.chat_id = $1::text
)`;
  const indexedWithWrite = indexed
    ? `, index_now AS (
  SELECT ch.version FROM chat ch
  WHERE coalesce((SELECT m.current FROM marks m), ch.last_sequence = ch.n)
), words_written AS (
  INSERT INTO ${names.searchWords} AS sw (chat_id, message_id, words, stamp)
  SELECT $1::text, w.id, CASE WHEN w.words = '' THEN '{}'::text[] ELSE string_to_array(w.words, ' ') END,
    CASE WHEN EXISTS (SELECT 1 FROM existing e WHERE e.message_id = w.id) THEN x.version ELSE 0 END
  FROM unnest($3::text[], ${words}::text[]) AS w(id, words) CROSS JOIN index_now x
  ON CONFLICT (chat_id, message_id) DO UPDATE SET words = excluded.words, stamp = excluded.stamp
    WHERE sw.stamp < excluded.stamp
  RETURNING 1
), marks_moved AS (
  INSERT INTO ${names.searchState} AS s (chat_id, indexed_version, indexed_sequence)
  SELECT $1::text, ch.version, ch.last_sequence FROM chat ch WHERE EXISTS (SELECT 1 FROM index_now)
  ON CONFLICT (chat_id) DO UPDATE SET
    indexed_version = greatest(s.indexed_version, excluded.indexed_version),
    indexed_sequence = greatest(s.indexed_sequence, excluded.indexed_sequence)
  RETURNING 1
)`
    : '';
  const indexedColumn = `, (SELECT m.current FROM marks m)${indexed ? ', EXISTS (SELECT 1 FROM marks_moved)' : ''}`;
  // A commit's live reply (see `commitLiveSql`): its parameters follow all the others.
  const liveSql =
    live === undefined
      ? { before: '', gate: '', after: '', columns: '' }
      : commitLiveSql(names, live, (mode === 'commit' ? 9 : 8) + (indexed ? 1 : 0));
  // $1 chat, $2 branch, $3 ids, $4 roles, $5 message JSON, $6 now (ms), $7 the expected head
  // (commit only), then the engine records' JSON (null for none; $8 for commit, $7 for append). Data-modifying CTEs all run against one snapshot and see each other only
  // through RETURNING, so the chain of dependencies (gate → chat → inserted/replaced) is what
  // makes them all-or-nothing: with no gate row, no other CTE has a row to act on.
  //
  // `locked` takes the branch row lock first: under READ COMMITTED a locking read that had to
  // wait for another writer returns the row as that writer committed it, so the head compared
  // (commit), attached to (append) and reported back is the current one, not the snapshot's.
  // The chat row is updated the same way, so version, sequence numbers and the newest node
  // are current too.
  //
  // `spans` places the ids that already exist, walking up from the head one run at a time (see
  // the `chain runs` migration): a node is on the branch when its sequence falls in one of the
  // spans. The walk stops once a span starts at or below the smallest sequence among those ids
  // (a parent's sequence is always below its child's), so correcting the last reply reads one
  // span. An existing id in no span is on another branch: `problem.off_branch` names it and
  // nothing is written. When the head itself is newer than the snapshot (another writer
  // committed it while this one waited for the lock), the walk cannot see it: `problem.stale`
  // asks the caller to run again. Each lookup is a LATERAL probe with LIMIT 1, so it is an index
  // probe whatever the planner knows about the table.
  //
  // Search: a chat nobody searched is not indexed here (see the `lazy search index` migration);
  // a searched one whose index is current is, with `indexedWithWrite` above. A replaced node
  // gets `rewritten_at`, the chat's new version, so the next search re-reads it unless this
  // write indexed it.
  //
  // The new nodes continue the run of the head they attach to when that head is the newest
  // node of the chat (`last_message_id`, still at `last_sequence`); otherwise they start one.
  const statement = `WITH RECURSIVE input AS (
  SELECT t.id, t.role, t.body, t.record, t.ordinal
  FROM unnest($3::text[], $4::text[], $5::text[], ${records}::text[]) WITH ORDINALITY AS t(id, role, body, record, ordinal)
), locked AS (
  SELECT b.head_message_id FROM ${names.branches} b
  WHERE b.chat_id = $1::text AND b.name = $2::text
  FOR NO KEY UPDATE
), existing AS (
  SELECT m.message_id, m.sequence FROM ${names.messages} m
  WHERE m.chat_id = $1::text AND m.message_id = ANY ($3::text[])
), spans AS (
  SELECT h.message_id, h.parent_id, h.sequence, coalesce(h.run_start, h.sequence) AS low
  FROM locked l CROSS JOIN LATERAL (
    SELECT m.message_id, m.parent_id, m.sequence, m.run_start FROM ${names.messages} m
    WHERE m.chat_id = $1::text AND m.message_id = l.head_message_id LIMIT 1
  ) h
  WHERE EXISTS (SELECT 1 FROM existing)
  UNION ALL
  SELECT q.message_id, q.parent_id, q.sequence, coalesce(q.run_start, q.sequence)
  FROM spans s
  CROSS JOIN LATERAL (
    SELECT CASE WHEN s.low = s.sequence THEN s.parent_id ELSE (
      SELECT f.parent_id FROM ${names.messages} f WHERE f.chat_id = $1::text AND f.sequence = s.low
    ) END AS id
  ) first_parent
  CROSS JOIN LATERAL (
    SELECT m.message_id, m.parent_id, m.sequence, m.run_start FROM ${names.messages} m
    WHERE m.chat_id = $1::text AND m.message_id = first_parent.id LIMIT 1
  ) q
  WHERE s.low > (SELECT min(e.sequence) FROM existing e)
), problem AS (
  SELECT
    (SELECT i.id FROM input i JOIN existing e ON e.message_id = i.id
     WHERE NOT EXISTS (SELECT 1 FROM spans s WHERE e.sequence BETWEEN s.low AND s.sequence)
     ORDER BY i.ordinal LIMIT 1) AS off_branch,
    (EXISTS (SELECT 1 FROM existing) AND l.head_message_id IS NOT NULL
     AND NOT EXISTS (SELECT 1 FROM spans s WHERE s.message_id = l.head_message_id)) AS stale
  FROM locked l
), fresh AS (
  SELECT i.id, i.role, i.body, i.record,
    row_number() OVER (ORDER BY i.ordinal) AS rank,
    lag(i.id) OVER (ORDER BY i.ordinal) AS previous_id
  FROM input i
  WHERE NOT EXISTS (SELECT 1 FROM existing e WHERE e.message_id = i.id)
), fresh_summary AS (
  SELECT count(*)::bigint AS n, (SELECT f.id FROM fresh f ORDER BY f.rank DESC LIMIT 1) AS last_id FROM fresh
)${liveSql.before}, gate AS (
  UPDATE ${names.branches} b SET
    head_message_id = coalesce(s.last_id, b.head_message_id),
    updated_at = CASE WHEN s.n > 0 THEN greatest(b.updated_at, $6::bigint) ELSE b.updated_at END
  FROM fresh_summary s, locked l, problem p
  WHERE b.chat_id = $1::text AND b.name = $2::text ${headMatches}
    AND p.off_branch IS NULL AND NOT p.stale ${liveSql.gate}
  RETURNING b.head_message_id, s.n, l.head_message_id AS previous_head
), chat AS (
  UPDATE ${names.chats} c SET
    version = c.version + 1,
    rewritten_at = CASE WHEN EXISTS (SELECT 1 FROM existing) THEN c.version + 1 ELSE c.rewritten_at END,
    last_sequence = c.last_sequence + g.n,
    last_run_start = CASE
      WHEN g.n = 0 THEN c.last_run_start
      WHEN g.previous_head = c.last_message_id AND c.last_message_sequence = c.last_sequence THEN c.last_run_start
      ELSE c.last_sequence + 1 END,
    last_message_id = CASE WHEN g.n = 0 THEN c.last_message_id ELSE g.head_message_id END,
    last_message_sequence = CASE WHEN g.n = 0 THEN c.last_message_sequence ELSE c.last_sequence + g.n END,
    updated_at = greatest(c.updated_at, $6::bigint)
  FROM gate g
  WHERE c.chat_id = $1::text
  RETURNING c.version, c.rewritten_at, c.last_sequence, c.last_run_start, g.n, g.head_message_id, g.previous_head
), inserted AS (
  INSERT INTO ${names.messages} (chat_id, message_id, parent_id, sequence, run_start, role, message, engine_record, created_at, updated_at)
  SELECT $1::text, f.id, CASE WHEN f.rank = 1 THEN ch.previous_head ELSE f.previous_id END,
    ch.last_sequence - ch.n + f.rank, ch.last_run_start, f.role, f.body::json, f.record::json, $6::bigint, $6::bigint
  FROM fresh f CROSS JOIN chat ch
  RETURNING 1
), replaced AS (
  UPDATE ${names.messages} m SET role = i.role, message = i.body::json,
    engine_record = coalesce(i.record::json, m.engine_record),
    updated_at = greatest(m.updated_at, $6::bigint),
    rewritten_at = ch.version
  FROM input i CROSS JOIN chat ch
  WHERE m.chat_id = $1::text AND m.message_id = i.id AND EXISTS (SELECT 1 FROM existing e WHERE e.message_id = i.id)
  RETURNING m.message_id, m.parent_id, m.sequence, m.created_at, m.updated_at, m.engine_record::text AS engine_record
)${marks}${indexedWithWrite}${liveSql.after}
SELECT ch.version, ch.rewritten_at, ch.head_message_id, r.message_id, r.parent_id, r.sequence, r.created_at, r.updated_at,
  l.found, coalesce(ch.previous_head, l.head_message_id), p.off_branch, p.stale, r.engine_record,
  ch.last_sequence, ch.n, (SELECT count(*) FROM inserted) AS written${indexedColumn}${liveSql.columns}
FROM (SELECT 1) AS one
LEFT JOIN (SELECT true AS found, head_message_id FROM locked) l ON true
LEFT JOIN problem p ON true
LEFT JOIN chat ch ON true
LEFT JOIN replaced r ON ch.version IS NOT NULL`;
  byMode.set(key, statement);
  return statement;
}
