// XML 1.0 (fifth edition) name rules, productions [4] and [4a]. Written as character classes so
// that a name is checked in one regular-expression pass.
const nameStartRanges =
  'A-Z_a-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C-\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD\\u{10000}-\\u{EFFFF}';
const nameRanges = `${nameStartRanges}\\-.0-9\\u00B7\\u0300-\\u036F\\u203F-\\u2040`;

// The common case (`hint`, `table_billing_0`), checked without the Unicode tables.
const plainAsciiName = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const validName = new RegExp(`^[${nameStartRanges}][${nameRanges}]*$`, 'u');
const invalidNameCharacter = new RegExp(`[^${nameRanges}]`, 'gu');
const validStart = new RegExp(`^[${nameStartRanges}]`, 'u');

/**
 * Turns any text into a valid XML element name, deterministically:
 *
 * 1. every character that may not appear in an XML name (spaces, punctuation, `:`, emoji, …)
 *    becomes `_`;
 * 2. a name that does not start with a letter or `_` (a digit, `-`, `.`), is empty, or starts
 *    with `xml` in any case (reserved by the XML specification) gets a leading `_`.
 *
 * The colon is replaced too, so the output never depends on namespace handling.
 */
export function toXmlName(text: string): string {
  if (plainAsciiName.test(text) && !/^xml/i.test(text)) return text;
  if (validName.test(text) && !/^xml/i.test(text)) return text;
  const replaced = text.replace(invalidNameCharacter, '_');
  if (replaced === '' || !validStart.test(replaced) || /^xml/i.test(replaced))
    return `_${replaced}`;
  return replaced;
}
