// The ids the message builders give a message that has none.

/** Base 62 in ASCII order, so that ids compare as their numbers do. */
const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Characters of the time part: 62^7 milliseconds reach the year 2081. */
const TIME_CHARACTERS = 7;

/** Random characters after it: 62^9 (about 2^53) ids per millisecond before a collision is likely. */
const RANDOM_CHARACTERS = 9;

/** Every runtime the codecs target has Web Crypto; the package's types name no runtime. */
const webCrypto = (
  globalThis as unknown as { crypto: { getRandomValues(bytes: Uint8Array): Uint8Array } }
).crypto;

/**
 * A new message id: 16 characters of `[0-9A-Za-z]`, as the AI SDK's `generateId()` gives, whose
 * first seven are the time in milliseconds, so ids made later sort after earlier ones (in
 * code-unit order, as SQL stores compare text). A store keys its messages by id: ids that grow
 * with time land at the end of its index, where each random id dirties an index page of its own
 * (on SQLite, a sixth of what saving a turn costs).
 */
export function newMessageId(now: number = Date.now()): string {
  let time = '';
  let rest = Math.max(0, Math.floor(now));
  for (let index = 0; index < TIME_CHARACTERS; index += 1) {
    time = DIGITS[rest % 62] + time;
    rest = Math.floor(rest / 62);
  }
  const bytes = webCrypto.getRandomValues(new Uint8Array(RANDOM_CHARACTERS));
  let random = '';
  // 248 = 4 × 62: bytes above it would favor some digits, so they are drawn again.
  for (const byte of bytes) random += DIGITS[byte < 248 ? byte % 62 : randomDigit()];
  return time + random;
}

function randomDigit(): number {
  const byte = new Uint8Array(1);
  do webCrypto.getRandomValues(byte);
  while ((byte[0] as number) >= 248);
  return (byte[0] as number) % 62;
}
