// The data rules: what an identifier is, what JSON a store keeps, how long a string is in UTF-8,
// the limits every store accepts exactly, and how error messages name a place in a value. Every
// layer applies the same rules (the builders and codecs at the boundary, the engine before a
// write, the stores through the store kit), so they live in the main entry.

export { assertIdentifier, stringProblem, utf8Length } from './identifiers';
export {
  CHAT_PAGE_SIZE,
  MAX_IDENTIFIER_BYTES,
  MAX_IDENTIFIER_LENGTH,
  MAX_JSON_DEPTH,
} from './limits';
export { describeValue, joinPath, prefixPath } from './paths';
export { assertJsonObject, jsonIssues } from './storable-json';
