import { LiveReplyLostError } from '@ctxgraph/fragments-core';
import type { TableNames } from '../schema/table-names';
import { CHAT_NOTICE, insertReplySql, purgeSql } from './live-replies-sql';
import { optionalText, type Row } from './rows';

// A commit's live reply: the part of a commit's one write statement that starts or ends a live
// reply (see `write-sql.ts`), so the question and its reply's record, or the reply's save and
// the end of its record, are one write.

/** A commit's live reply, as its write statement carries it. */
export type CommitLive =
  | {
      readonly kind: 'start';
      readonly replyId: string;
      readonly owner: string;
      readonly leaseExpiresAt: number;
      readonly now: number;
      readonly dataJson: string;
    }
  | {
      readonly kind: 'end';
      readonly replyId: string;
      readonly owner: string;
      /** When it ends (the store's clock). */
      readonly now: number;
      /** Replies that ended at or before it are deleted (now minus the grace period). */
      readonly cutoff: number;
    };

/** What a commit's write statement adds for its live reply (see `write-sql.ts`). */
export interface CommitLiveSql {
  /** CTEs before `gate` (each starting with a comma). */
  readonly before: string;
  /** A condition the gate adds (starting with AND), or ''. */
  readonly gate: string;
  /** CTEs after the writes (each starting with a comma). */
  readonly after: string;
  /** Columns the final SELECT adds (each starting with a comma): read by {@link commitLiveOutcome}. */
  readonly columns: string;
}

/**
 * The SQL a commit's write statement adds for its live reply, its parameters numbered from
 * `first`: `start` inserts the record off the `chat` CTE (so only when the commit writes; a taken
 * id aborts the statement with a unique violation), `end` locks the record before the gate, lets
 * the gate through only when `owner` holds it, and deletes it (its chunks by cascade) off `chat`.
 * Either sends the chat's NOTIFY with the write.
 */
export function commitLiveSql(
  names: TableNames,
  kind: CommitLive['kind'],
  first: number,
): CommitLiveSql {
  const parameter = (index: number): string => `$${first + index}`;
  const notify = `, CASE WHEN ch.version IS NOT NULL THEN pg_notify(${parameter(kind === 'start' ? 5 : 2)}::text, ${CHAT_NOTICE}) END`;
  if (kind === 'start') {
    return {
      before: '',
      gate: '',
      after: `, live_started AS (
  ${insertReplySql(names, 'chat ch', false, {
    replyId: `${parameter(0)}::text`,
    branch: '$2::text',
    afterNodeId: 'ch.head_message_id',
    owner: `${parameter(1)}::text`,
    leaseExpiresAt: `${parameter(2)}::bigint`,
    now: `${parameter(3)}::bigint`,
    data: `${parameter(4)}::text::json`,
  })}
)`,
      columns: `, (SELECT count(*) FROM live_started)${notify}`,
    };
  }
  return {
    before: `, live_held AS (
  SELECT r.owner FROM ${names.liveReplies} r
  WHERE r.chat_id = $1::text AND r.reply_id = ${parameter(0)}::text AND r.ended_at IS NULL
  FOR UPDATE
)`,
    gate: `AND EXISTS (SELECT 1 FROM live_held h WHERE h.owner = ${parameter(1)}::text)`,
    after: `, live_ended AS (
  UPDATE ${names.liveReplies} r SET ended_at = ${parameter(3)}::bigint FROM chat ch
  WHERE r.chat_id = $1::text AND r.reply_id = ${parameter(0)}::text
  RETURNING 1
), live_purged AS (
  ${purgeSql(names, `${parameter(4)}::bigint`, 'EXISTS (SELECT 1 FROM live_ended)')}
)`,
    columns: `, (SELECT h.owner FROM live_held h), (SELECT count(*) FROM live_ended)${notify}`,
  };
}

/** The parameters of {@link commitLiveSql}, in order. */
export function commitLiveParameters(names: TableNames, live: CommitLive): (string | number)[] {
  if (live.kind === 'start')
    return [
      live.replyId,
      live.owner,
      live.leaseExpiresAt,
      live.now,
      live.dataJson,
      names.changeChannel,
    ];
  return [live.replyId, live.owner, names.changeChannel, live.now, live.cutoff];
}

/**
 * `LiveReplyLostError` when a commit that ends a reply was refused because `owner` does not hold
 * it (the owner the statement found is at `column`); undefined otherwise.
 */
export function commitLiveLost(
  chatId: string,
  live: CommitLive | undefined,
  row: Row,
  column: number,
): LiveReplyLostError | undefined {
  if (live?.kind !== 'end') return undefined;
  const currentOwner = optionalText(row[column]);
  if (currentOwner === live.owner) return undefined;
  return new LiveReplyLostError({ chatId, replyId: live.replyId, owner: live.owner, currentOwner });
}
