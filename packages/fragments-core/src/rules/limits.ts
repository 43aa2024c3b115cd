// The limits every store accepts exactly, and every layer checks before a write.

/** The longest id or name a store accepts, in UTF-16 code units. */
export const MAX_IDENTIFIER_LENGTH = 512;

/**
 * The longest id or name a store accepts, in UTF-8 bytes (512 ASCII characters, 170 CJK ones).
 * Keys made of two or three identifiers must fit one B-tree index entry (PostgreSQL's limit is
 * about 2,700 bytes), so every store accepts exactly this and nothing longer.
 */
export const MAX_IDENTIFIER_BYTES = 512;

/**
 * The deepest nesting of arrays and objects a stored message or metadata value may have, counting
 * the message (or metadata) object itself as level 1: a part's `data` sits at level 3. Deeper
 * values are refused with a `ValidationError` instead of overflowing a stack somewhere later.
 */
export const MAX_JSON_DEPTH = 128;

/** The default and the largest page size of `listChats`. */
export const CHAT_PAGE_SIZE: { readonly default: number; readonly max: number } = {
  default: 20,
  max: 100,
};
