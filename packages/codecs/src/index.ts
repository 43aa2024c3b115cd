export {
  assistant,
  assistantText,
  type BuiltMessage,
  builtMessage,
  encodeStorableMessage,
  type MaterializedMessage,
  type MessageFragment,
  type MessageRole,
  message,
  type TextMessageOptions,
  user,
} from './message-fragment';
export { type ToModelMessagesOptions, toModelMessages } from './model-messages';
export { parsePlainMessages, settledMessage } from './plain-messages';
export { assertStorableMessage, storableMessageIssues } from './storable-message';
export {
  checkMessages,
  type MessageCheck,
  type MessageSchemas,
  MessageValidationError,
  type MessageValidationErrorOptions,
  validateMessage,
  validateMessages,
} from './validate-messages';
