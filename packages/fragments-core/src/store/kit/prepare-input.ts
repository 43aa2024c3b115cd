import { ValidationError } from '../../errors/errors';
import type { JsonObject } from '../../json';
import type {
  AppendInput,
  ChatPointerInput,
  CommitInput,
  CreateBranchInput,
  CreateCheckpointInput,
  FindMessageNodesInput,
  ForkBranchInput,
  GetChainInput,
  GetHeadInput,
  GetMessageInput,
  ListChatsInput,
  OpenChatInput,
  RenameBranchInput,
  SaveContextInput,
  UpdateChatInput,
} from '../context-store';
import type {
  PreparedAppend,
  PreparedCommit,
  PreparedCreateBranch,
  PreparedCreateCheckpoint,
  PreparedFindMessageNodes,
  PreparedForkBranch,
  PreparedGetChain,
  PreparedOpenChat,
  PreparedRenameBranch,
  PreparedSaveContext,
  PreparedUpdateChat,
} from './context-store-driver';
import { prepareCommitLive } from './live-reply-input';
import {
  assertChainLimit,
  assertForkBranchInput,
  assertIdentifier,
  assertInputObject,
  assertJsonObject,
  assertOptionalBoolean,
  assertTitle,
  type ChatListQuery,
  findMessageNodesLimit,
  type PreparedCommitMessage,
  type PrepareMessagesOptions,
  prepareAppend,
  prepareChatList,
  prepareCommit,
  prepareSaveContext,
  utf8Length,
} from './store-input';

// One function per contract method: check the raw input with the shared rules (same order, same
// messages as before the kit existed) and build the prepared value a driver receives. Each field
// is read once, into a fresh object, so a getter or a caller mutating its input while an
// asynchronous driver works cannot change what was checked.

/** The size limit of a store, or undefined for none. */
export type ByteLimit = number | undefined;

/** Refuses a text longer than `limit` UTF-8 bytes. */
export function checkBytes(method: string, field: string, text: string, limit: ByteLimit): void {
  // UTF-8 takes at most 3 bytes per UTF-16 code unit: only long texts need counting.
  if (limit === undefined || text.length * 3 <= limit) return;
  const bytes = utf8Length(text);
  if (bytes <= limit) return;
  const problem = `is ${bytes} bytes, more than the store accepts (${limit})`;
  throw new ValidationError(`${method}: ${field} ${problem}. Nothing was written.`, {
    issues: [{ path: field, message: problem }],
  });
}

function checkMessageBytes(
  method: string,
  messages: readonly PreparedCommitMessage[],
  limit: ByteLimit,
): void {
  if (limit === undefined) return;
  messages.forEach((message, index) => {
    checkBytes(method, `messages[${index}].message`, message.json, limit);
    if (message.engineRecordJson !== null)
      checkBytes(method, `messages[${index}].engineRecord`, message.engineRecordJson, limit);
  });
}

/** Checks metadata and returns its JSON text (one walk of the value). */
function metadataText(method: string, metadata: unknown, limit: ByteLimit): string {
  assertJsonObject(method, 'metadata', metadata);
  const text = JSON.stringify(metadata);
  checkBytes(method, 'metadata', text, limit);
  return text;
}

/** `openChat(input)`. */
export function prepareOpenChat(input: OpenChatInput, limit: ByteLimit): PreparedOpenChat {
  const method = 'openChat(input)';
  assertInputObject(method, input);
  const { chatId, userId, metadata, title } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'userId', userId);
  const text = metadata === undefined ? undefined : metadataText(method, metadata, limit);
  assertTitle(method, title, false);
  if (typeof title === 'string') checkBytes(method, 'title', title, limit);
  return {
    chatId,
    userId,
    title: title ?? null,
    metadata: text === undefined ? undefined : (JSON.parse(text) as JsonObject),
    metadataJson: text ?? '{}',
  };
}

/** `updateChat(input)`. */
export function prepareUpdateChat(input: UpdateChatInput, limit: ByteLimit): PreparedUpdateChat {
  const method = 'updateChat(input)';
  assertInputObject(method, input);
  const { chatId, title, metadata } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertTitle(method, title, true);
  if (typeof title === 'string') checkBytes(method, 'title', title, limit);
  const text = metadata === undefined ? undefined : metadataText(method, metadata, limit);
  return {
    chatId,
    title,
    metadata: text === undefined ? undefined : (JSON.parse(text) as JsonObject),
  };
}

/** `listChats(input)`. */
export function prepareListChats(input: ListChatsInput): ChatListQuery {
  assertInputObject('listChats(input)', input);
  const { userId, limit, cursor } = input;
  return prepareChatList({
    userId,
    ...(limit === undefined ? {} : { limit }),
    ...(cursor === undefined ? {} : { cursor }),
  });
}

/** A method whose only argument is a chat id: `getChat(chatId)`, `deleteChat(chatId)`, … */
export function prepareChatId(method: string, chatId: string): string {
  assertIdentifier(method, 'chatId', chatId);
  return chatId;
}

/** `getHead(input)`. */
export function prepareGetHead(input: GetHeadInput): GetHeadInput {
  const method = 'getHead(input)';
  assertInputObject(method, input);
  const { chatId, branch } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'branch', branch);
  return { chatId, branch };
}

/** `commit(input)`. */
export function prepareCommitInput(
  input: CommitInput,
  limit: ByteLimit,
  options: PrepareMessagesOptions,
  liveReplies: boolean = false,
): PreparedCommit {
  assertInputObject('commit(input)', input);
  const { chatId, branch, expectedHeadId, messages, fork, startReply, endReply } = input;
  // Read once into a fresh object: what was checked is what the driver gets.
  const forkCopy =
    typeof fork === 'object' && fork !== null && !Array.isArray(fork)
      ? { from: fork.from, activate: fork.activate }
      : fork;
  const prepared = prepareCommit(
    {
      chatId,
      branch,
      expectedHeadId,
      messages,
      ...(forkCopy === undefined ? {} : { fork: forkCopy }),
    },
    options,
  );
  checkMessageBytes('commit(input)', prepared, limit);
  const live = prepareCommitLive(startReply, endReply, liveReplies, limit);
  return {
    chatId,
    branch,
    expectedHeadId,
    messages: prepared,
    fork:
      forkCopy === undefined
        ? undefined
        : { from: forkCopy.from, activate: forkCopy.activate === true },
    ...(live.startReply === undefined ? {} : { startReply: live.startReply }),
    ...(live.endReply === undefined ? {} : { endReply: live.endReply }),
  };
}

/** `findMessageNodes(input)`. */
export function prepareFindMessageNodes(input: FindMessageNodesInput): PreparedFindMessageNodes {
  const method = 'findMessageNodes(input)';
  assertInputObject(method, input);
  const { chatId, messageId, limit } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'messageId', messageId);
  return { chatId, messageId, limit: findMessageNodesLimit(limit) };
}

/** `append(input)`. */
export function prepareAppendInput(
  input: AppendInput,
  limit: ByteLimit,
  options: PrepareMessagesOptions,
): PreparedAppend {
  assertInputObject('append(input)', input);
  const { chatId, branch, messages } = input;
  const prepared = prepareAppend({ chatId, branch, messages }, options);
  checkMessageBytes('append(input)', prepared, limit);
  return { chatId, branch, messages: prepared };
}

/** `getChain(input)`. */
export function prepareGetChain(input: GetChainInput): PreparedGetChain {
  const method = 'getChain(input)';
  assertInputObject(method, input);
  const { chatId, headMessageId, until, limit } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'headMessageId', headMessageId);
  if (until !== undefined) assertIdentifier(method, 'until', until);
  assertChainLimit(limit);
  return { chatId, headMessageId, until, limit };
}

/** `getMessage(input)`. */
export function prepareGetMessage(input: GetMessageInput): GetMessageInput {
  const method = 'getMessage(input)';
  assertInputObject(method, input);
  const { chatId, messageId } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'messageId', messageId);
  return { chatId, messageId };
}

/** `createBranch(input)`. */
export function prepareCreateBranch(input: CreateBranchInput): PreparedCreateBranch {
  const method = 'createBranch(input)';
  assertInputObject(method, input);
  const { chatId, name, headMessageId, activate } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'name', name);
  if (headMessageId !== null) assertIdentifier(method, 'headMessageId', headMessageId);
  assertOptionalBoolean(method, 'activate', activate);
  return { chatId, name, headMessageId, activate: activate === true };
}

/** `renameBranch(input)`: the chat id and both names valid, and `to` other than `from`. */
export function prepareRenameBranch(input: RenameBranchInput): PreparedRenameBranch {
  const method = 'renameBranch(input)';
  assertInputObject(method, input);
  const { chatId, from, to } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'from', from);
  assertIdentifier(method, 'to', to);
  if (from === to)
    throw new ValidationError(
      `${method}: to is "${to}", the branch's current name; give a new name. Nothing was written.`,
      { issues: [{ path: 'to', message: 'equals from' }] },
    );
  return { chatId, from, to };
}

/** `forkBranch(input)`. */
export function prepareForkBranch(input: ForkBranchInput): PreparedForkBranch {
  assertInputObject('forkBranch(input)', input);
  const { chatId, from, headMessageId, activate } = input;
  assertForkBranchInput({ chatId, from, headMessageId, activate });
  return { chatId, from, headMessageId, activate: activate === true };
}

/** `getBranch`, `setActiveBranch`, `getCheckpoint`, `deleteCheckpoint`: a chat and a name. */
export function preparePointer(method: string, input: ChatPointerInput): ChatPointerInput {
  assertInputObject(method, input);
  const { chatId, name } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'name', name);
  return { chatId, name };
}

/** `createCheckpoint(input)`. */
export function prepareCreateCheckpoint(input: CreateCheckpointInput): PreparedCreateCheckpoint {
  const method = 'createCheckpoint(input)';
  assertInputObject(method, input);
  const { chatId, name, messageId, replace } = input;
  assertIdentifier(method, 'chatId', chatId);
  assertIdentifier(method, 'name', name);
  assertIdentifier(method, 'messageId', messageId);
  assertOptionalBoolean(method, 'replace', replace);
  return { chatId, name, messageId, replace: replace === true };
}

/** `saveContext(input)`. */
export function prepareSaveContextInput(
  input: SaveContextInput,
  limit: ByteLimit,
): PreparedSaveContext {
  assertInputObject('saveContext(input)', input);
  const { chatId, fragments, expectedRevision } = input;
  const fragmentsJson = prepareSaveContext({
    chatId,
    fragments,
    ...(expectedRevision === undefined ? {} : { expectedRevision }),
  });
  checkBytes('saveContext(input)', 'fragments', fragmentsJson, limit);
  return { chatId, fragmentsJson, expectedRevision };
}
