import type { TableNames } from '../schema/table-names';

/**
 * One step of a chain walk, one run at a time (see the `chain runs` migration), as SQL to put
 * after `FROM spans s`: from span `s` (the nodes low..sequence of one run), the next span starts
 * at the parent of the run's first node. `chat` is the SQL of the chat id of `s`. Yields `q`
 * (`parent_id`, `sequence`, `low`). Shared by search's branch scope and prune's reachability.
 */
export function nextSpan(names: TableNames, chat: string): string {
  return `CROSS JOIN LATERAL (
    SELECT CASE WHEN s.low = s.sequence THEN s.parent_id ELSE (
      SELECT f.parent_id FROM ${names.messages} f WHERE f.chat_id = ${chat} AND f.sequence = s.low
    ) END AS id
  ) first_parent
  CROSS JOIN LATERAL (
    SELECT m.parent_id, m.sequence, coalesce(m.run_start, m.sequence) AS low
    FROM ${names.messages} m
    WHERE m.chat_id = ${chat} AND m.message_id = first_parent.id
    LIMIT 1
  ) q`;
}
