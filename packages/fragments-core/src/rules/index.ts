// The data rules: what an identifier is, what JSON a store keeps, how long a string is in UTF-8,
// the limits every store accepts exactly, and how error messages name a place in a value. Every
// layer applies the same rules (the builders and codecs at the boundary, the engine before a
// write, the stores in the kit), so they live in the main entry; the checks themselves are the
// store kit's (`store/kit/store-input.ts`), re-exported here so their bodies stay in one place.

export {
  assertIdentifier,
  assertJsonObject,
  CHAT_PAGE_SIZE,
  jsonIssues,
  MAX_IDENTIFIER_BYTES,
  MAX_IDENTIFIER_LENGTH,
  MAX_JSON_DEPTH,
  stringProblem,
  utf8Length,
} from '../store/kit/store-input';
export { describeValue, joinPath, prefixPath } from './paths';
