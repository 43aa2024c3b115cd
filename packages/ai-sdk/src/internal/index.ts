/**
 * `@ctxgraph/ai-sdk/internal`: building blocks of the request cycle, shared with tests and with
 * code that assembles a cycle of its own; **not for apps**. These names carry no semver promise:
 * they may change or go in any release of `@ctxgraph/ai-sdk`. Apps use the main entry
 * (`createChatCycle`, `readChatBody`, `chatErrorResponse`, …).
 *
 * @internal
 * @module
 */

export { readChatRequest, validateChatMessages } from '../request/read-chat-request';
export type { ReplyUsage } from '../stream/call-usage';
export { sumUsage } from '../stream/call-usage';
export { settleReply } from '../stream/settle-reply';
