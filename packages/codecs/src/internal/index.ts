/**
 * `@ctxgraph/codecs/internal`: what the engine's fast paths need from the codecs, shared across
 * packages and **not for users**. These names carry no semver promise: they may change or go in
 * any release of `@ctxgraph/codecs`, and the engine is released with them. Apps use the main
 * entry (`message`, `user`, `validateMessages`, …).
 *
 * @internal
 * @module
 */
export { type BuiltMessage, builtMessage, encodeStorableMessage } from '../message-fragment';
export { parsePlainMessages, plainParser, settledMessage } from '../plain-messages';
