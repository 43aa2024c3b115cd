export type {
  ChatEvent,
  ReplyOutcome,
  SavedChat,
  SavedVersions,
  VersionNode,
} from '@ctxgraph/client';
export {
  BranchPicker,
  type BranchPickerButtonProps,
  BranchPickerLabel,
  BranchPickerNext,
  BranchPickerPrevious,
  type BranchPickerProps,
} from './branch-picker';
export { readNodeFromUrl, writeNodeToUrl } from './node-in-url';
export {
  type MessageVersions,
  type UseCtxgraphChatHelpers,
  type UseCtxgraphChatOptions,
  useCtxgraphChat,
} from './use-ctxgraph-chat';
