// The store-input helpers as the package root exported them before they moved to
// `@ctxgraph/fragments-core/store-kit`. Same functions (not copies), kept so that stores built on
// the root exports keep working; each says where to import it from now. The contract limits
// (MAX_IDENTIFIER_*, MAX_JSON_DEPTH, CHAT_PAGE_SIZE) stay at the root for good.
import * as kit from './kit/store-input';

/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export type ChatListQuery = kit.ChatListQuery;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export type PreparedCommitMessage = kit.PreparedCommitMessage;

/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const assertChainLimit: typeof kit.assertChainLimit = kit.assertChainLimit;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const assertForkBranchInput: typeof kit.assertForkBranchInput = kit.assertForkBranchInput;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const assertIdentifier: typeof kit.assertIdentifier = kit.assertIdentifier;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const assertInputObject: typeof kit.assertInputObject = kit.assertInputObject;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const assertJsonObject: typeof kit.assertJsonObject = kit.assertJsonObject;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const assertOptionalBoolean: typeof kit.assertOptionalBoolean = kit.assertOptionalBoolean;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const assertTitle: typeof kit.assertTitle = kit.assertTitle;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const chatCursor: typeof kit.chatCursor = kit.chatCursor;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const jsonIssues: typeof kit.jsonIssues = kit.jsonIssues;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const mergeMetadata: typeof kit.mergeMetadata = kit.mergeMetadata;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const prepareAppend: typeof kit.prepareAppend = kit.prepareAppend;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const prepareChatList: typeof kit.prepareChatList = kit.prepareChatList;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const prepareCommit: typeof kit.prepareCommit = kit.prepareCommit;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const prepareSaveContext: typeof kit.prepareSaveContext = kit.prepareSaveContext;
/** @deprecated Moved to `@ctxgraph/fragments-core/store-kit`. */
export const toJsonText: typeof kit.toJsonText = kit.toJsonText;
