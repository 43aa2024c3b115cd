/**
 * A 64-bit FNV-1a hash of a string's UTF-16 code units, as 16 hex digits: small, fast and
 * runtime-neutral (no `node:crypto`). It tells whether a segment's bytes changed between two
 * calls; it is not a security hash.
 */
export function segmentHash(text: string): string {
  // Two 32-bit FNV-1a lanes with different offsets stand in for one 64-bit hash.
  let first = 0x811c9dc5;
  let second = 0x01000193 ^ text.length;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    first = Math.imul(first ^ code, 0x01000193);
    second = Math.imul(second ^ code, 0x01000193) ^ (first >>> 15);
  }
  return (first >>> 0).toString(16).padStart(8, '0') + (second >>> 0).toString(16).padStart(8, '0');
}
