import type { TableNames } from './table-names';

/**
 * The SQL expression of a message's search vector, from its JSON (`json` typed): the `text` of
 * its `text` and `reasoning` parts, one per line, in Unicode NFC, through the store's text
 * search configuration. The same words the store kit's `messageSearchText` picks. The write
 * statement and the migration that adds search both use it, so a row is indexed the same way
 * whichever wrote it.
 */
export function searchVectorSql(names: TableNames, messageJson: string): string {
  return `to_tsvector(${names.searchConfig}, normalize(coalesce((
    SELECT string_agg(p.part ->> 'text', E'\\n' ORDER BY p.position)
    FROM json_array_elements(CASE WHEN json_typeof((${messageJson}) -> 'parts') = 'array'
      THEN (${messageJson}) -> 'parts' ELSE '[]'::json END) WITH ORDINALITY AS p(part, position)
    WHERE p.part ->> 'type' IN ('text', 'reasoning') AND json_typeof(p.part -> 'text') = 'string'
  ), ''), NFC))`;
}
