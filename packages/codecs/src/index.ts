export {
  assistant,
  assistantText,
  type MaterializedMessage,
  type MessageFragment,
  type MessageRole,
  message,
  type TextMessageOptions,
  user,
} from './message-fragment';
export { type ToModelMessagesOptions, toModelMessages } from './model-messages';
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
