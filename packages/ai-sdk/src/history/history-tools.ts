// Recall as AI SDK tools (issue #39): what the model cannot see (another branch, a span a
// compaction replaced, another chat of the user) it can search, list and read. Every tool acts
// for one user only, treats its input as hostile, and bounds its result in tokens.
import {
  assertIdentifier,
  BranchNotFoundError,
  ChatNotFoundError,
  type ChatRecord,
  type ContextStore,
  createEstimatorTokenizer,
  isTokenizer,
  type MessageNodeRecord,
  MessageNotFoundError,
  OwnershipError,
  readBranchSummary,
  readCompaction,
  readDropped,
  type Tokenizer,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { type Tool, tool } from 'ai';
import { cutText, fitItems } from './bounded-result';
import { messageText } from './message-text';
import {
  type HistoryScope,
  historyInputs,
  type ListBranchesInput,
  type ReadBranchInput,
  recheck,
  type SearchHistoryInput,
} from './tool-inputs';

export type { HistoryScope, ListBranchesInput, ReadBranchInput, SearchHistoryInput };

/** Options of {@link historyTools}. */
export interface HistoryToolsOptions {
  /** Where the chats live. */
  readonly store: ContextStore;
  /**
   * The user the tools act for (the signed-in user, never a value the model chose): they reach
   * this user's chats only, and answer a chat of anyone else exactly as a chat that does not exist.
   */
  readonly userId: string;
  /** The chat of the conversation (the default chat of every tool). */
  readonly chatId: string;
  /**
   * The branch of the conversation: the default of `readBranch` and of `searchHistory`'s
   * `'branch'` scope.
   * @default the chat's active branch
   */
  readonly branch?: string;
  /**
   * What results are counted with: the tokenizer of the engine the conversation runs on (its
   * `tokenizer` option), so a result's bound is in the budget's tokens.
   * @default the engine's default, `createEstimatorTokenizer()`
   */
  readonly tokenizer?: Tokenizer;
  /**
   * The most tokens one tool result may take (counted on the JSON the model is given). A result
   * that would be larger keeps its most relevant items (best hits, newest messages, most recently
   * updated branches) and says so (`truncated: true`); a message too long alone is cut, marked
   * `cut: true`. From 256 to 100,000.
   * @default 2000
   */
  readonly maxResultTokens?: number;
}

/** What a tool answers instead of data: a chat, branch or message it cannot reach, or a bad request. */
export interface HistoryRefusal {
  /** What was wrong, for the model to correct. */
  readonly error: string;
}

/** One message `searchHistory` found. */
export interface HistoryHit {
  /** The chat it is in. */
  readonly chatId: string;
  /** The chat's title (scope `'user'` only), or null. */
  readonly chatTitle?: string | null;
  /** Its node id: pass it to `readBranch` as `end` to read it with the messages before it. */
  readonly node: string;
  /** The message's role. */
  readonly role: string;
  /** A short excerpt around the first word found. */
  readonly snippet: string;
  /** The branches whose conversation holds it (at most 10 names; `moreBranches` counts the rest). */
  readonly branches: readonly string[];
  /** How many more branches hold it. */
  readonly moreBranches?: number;
}

/** What `searchHistory` answers. */
export interface SearchHistoryResult {
  readonly scope: HistoryScope;
  /** Best first. */
  readonly hits: readonly HistoryHit[];
  /** Pass as `cursor` for the next page; null when there is none. */
  readonly nextCursor: string | null;
  /** True when hits were left out to keep the result within its token bound. */
  readonly truncated: boolean;
}

/** One branch `listBranches` lists. */
export interface HistoryBranch {
  readonly name: string;
  /** Its newest message's node id (null while empty): pass as `end` to `readBranch`. */
  readonly head: string | null;
  /** How many messages its conversation has. */
  readonly messages: number;
  /** When it last moved (ISO 8601). */
  readonly updatedAt: string;
  /** Its newest message, shortened. */
  readonly last: { readonly role: string; readonly preview: string } | null;
}

/** What `listBranches` answers. */
export interface ListBranchesResult {
  readonly chatId: string;
  readonly title: string | null;
  /** The chat's active branch. */
  readonly activeBranch: string;
  /** The branch of this conversation (for its own chat). */
  readonly currentBranch?: string;
  /** Most recently updated first. */
  readonly branches: readonly HistoryBranch[];
  /** How many branches the chat has. */
  readonly totalBranches: number;
  /** True when branches were left out (the limit, or the token bound). */
  readonly truncated: boolean;
}

/** One message `readBranch` read. */
export interface HistoryMessage {
  /** Its node id. */
  readonly node: string;
  readonly role: string;
  /** Its text (tool calls in brackets). */
  readonly text: string;
  /** True when its text was cut to keep the result within its token bound. */
  readonly cut?: true;
  /**
   * This message is a summary that replaced the conversation up to and including `coversThrough`
   * (a node id) in what the model is sent.
   */
  readonly compaction?: { readonly coversThrough: string; readonly coveredMessages: number };
  /**
   * The summary (a node id) that replaced this message in what the model is sent: this is one
   * of the originals, readable here.
   */
  readonly summarizedBy?: string;
  /** True when the original's content was deleted after a compaction (only the summary remains). */
  readonly dropped?: true;
  /** This message summarizes another branch (named here), carried onto this one. */
  readonly summaryOfBranch?: string;
}

/** What `readBranch` answers. */
export interface ReadBranchResult {
  readonly chatId: string;
  /** The branch read (null when read back from a node). */
  readonly branch: string | null;
  /** Oldest first, ending with the newest one asked for. */
  readonly messages: readonly HistoryMessage[];
  /** Pass as `end` to read the messages before these; null at the start of the conversation. */
  readonly older: string | null;
  /** True when messages were left out or cut to keep the result within its token bound. */
  readonly truncated: boolean;
}

/** The tool that searches (only for a store that declares search). */
export type SearchHistoryTool = Tool<SearchHistoryInput, SearchHistoryResult | HistoryRefusal>;
/** The tool that lists a chat's branches. */
export type ListBranchesTool = Tool<ListBranchesInput, ListBranchesResult | HistoryRefusal>;
/** The tool that reads a range of a branch. */
export type ReadBranchTool = Tool<ReadBranchInput, ReadBranchResult | HistoryRefusal>;

/**
 * The tools of {@link historyTools}, for `streamText({ tools })`. `searchHistory` is there only
 * when the store declares `capabilities.search` (`'searchHistory' in tools` tells).
 */
export type HistoryTools =
  | {
      readonly searchHistory: SearchHistoryTool;
      readonly listBranches: ListBranchesTool;
      readonly readBranch: ReadBranchTool;
    }
  | { readonly listBranches: ListBranchesTool; readonly readBranch: ReadBranchTool };

const DEFAULT_MAX_RESULT_TOKENS = 2000;
const RESULT_TOKEN_RANGE = { min: 256, max: 100_000 };
const BRANCH_NAMES_PER_HIT = 10;
const PREVIEW_CHARACTERS = 200;

/** The options checked: a `ValidationError` naming the option, before any tool exists. */
function checkOptions(options: HistoryToolsOptions): {
  readonly tokenizer: Tokenizer;
  readonly maxResultTokens: number;
} {
  const where = 'historyTools(options)';
  if (typeof options !== 'object' || options === null)
    throw new ValidationError(`${where}: options must be an object.`);
  const { store } = options;
  if (
    typeof store !== 'object' ||
    store === null ||
    store.specificationVersion !== 'v1' ||
    typeof store.getChain !== 'function'
  )
    throw new ValidationError(
      `${where}: store must be a ContextStore (specificationVersion 'v1').`,
      {
        issues: [{ path: 'store', message: 'expected a ContextStore' }],
      },
    );
  assertIdentifier(where, 'userId', options.userId);
  assertIdentifier(where, 'chatId', options.chatId);
  if (options.branch !== undefined) assertIdentifier(where, 'branch', options.branch);
  if (options.tokenizer !== undefined && !isTokenizer(options.tokenizer))
    throw new ValidationError(`${where}: tokenizer must be a Tokenizer (id and count(text)).`, {
      issues: [{ path: 'tokenizer', message: 'expected a Tokenizer' }],
    });
  const maxResultTokens = options.maxResultTokens ?? DEFAULT_MAX_RESULT_TOKENS;
  if (
    !Number.isInteger(maxResultTokens) ||
    maxResultTokens < RESULT_TOKEN_RANGE.min ||
    maxResultTokens > RESULT_TOKEN_RANGE.max
  )
    throw new ValidationError(
      `${where}: maxResultTokens must be an integer from ${RESULT_TOKEN_RANGE.min} to ${RESULT_TOKEN_RANGE.max}, received ${String(maxResultTokens)}.`,
      { issues: [{ path: 'maxResultTokens', message: 'expected an integer in range' }] },
    );
  return { tokenizer: options.tokenizer ?? createEstimatorTokenizer(), maxResultTokens };
}

/** A refusal the model can act on, thrown inside a tool and answered as `{ error }`. */
class Refusal extends Error {}

const noChat = (chatId: string): Refusal =>
  // The same words for a chat of another user as for one that does not exist: no data, and no
  // hint that it exists.
  new Refusal(`No chat ${JSON.stringify(chatId)} for this user.`);

/**
 * Runs a tool's work: its input checked again (a tool may be called by hand), the refusals and
 * the store's answers about a bad or unknown id turned into `{ error }`; anything else (the store
 * unreachable) is thrown, so the SDK reports a tool error.
 */
async function answer<Input, Result>(
  name: 'searchHistory' | 'listBranches' | 'readBranch',
  input: unknown,
  chatIdOf: (input: Input) => string,
  work: (input: Input) => Promise<Result>,
  refuse: (message: string) => HistoryRefusal,
): Promise<Result | HistoryRefusal> {
  const checked = recheck<Input>(name, historyInputs[name].fields, input);
  if ('problem' in checked) return refuse(checked.problem);
  try {
    return await work(checked.value);
  } catch (error) {
    if (error instanceof Refusal) return refuse(error.message);
    if (ChatNotFoundError.isInstance(error) || OwnershipError.isInstance(error))
      return refuse(noChat(chatIdOf(checked.value)).message);
    if (
      BranchNotFoundError.isInstance(error) ||
      MessageNotFoundError.isInstance(error) ||
      ValidationError.isInstance(error)
    )
      return refuse(`${name}: ${(error as Error).message}`);
    throw error;
  }
}

/**
 * Three AI SDK tools that let a model recall what it cannot see: `searchHistory` (the store's
 * full-text search over this branch, this chat or every chat of the user; each hit names the
 * branches that hold it), `listBranches` (a chat's branches: name, newest message, message count)
 * and `readBranch` (a range of a branch's messages, read back from its newest message or from a
 * node, the originals a compaction replaced included and marked). They act for `userId` alone:
 * a chat id the model writes that is not this user's is answered `{ error }` like an unknown one,
 * with no data. Every input is checked (bounded strings and counts, no unknown fields), and every
 * result fits in `maxResultTokens` tokens of `tokenizer`, saying when it was cut.
 *
 * A store without search (`capabilities.search` not declared) gets no `searchHistory`: a tool
 * that can only fail would cost the model a step.
 *
 * @example
 * ```ts
 * const result = streamText({
 *   model,
 *   system,
 *   messages,
 *   tools: historyTools({ store, userId, chatId }),
 *   stopWhen: stepCountIs(5),
 * });
 * ```
 */
export function historyTools(options: HistoryToolsOptions): HistoryTools {
  const { tokenizer, maxResultTokens } = checkOptions(options);
  const { store, userId } = options;
  const currentChat = options.chatId;
  // A refusal is a result too: bounded like the others (a store's message may quote an input).
  const refuse = (message: string): HistoryRefusal => ({
    error: cutText(tokenizer, message, maxResultTokens - 16).text,
  });

  /** The chat when it is this user's; a refusal otherwise (unknown and foreign alike). */
  const ownedChat = async (chatId: string): Promise<ChatRecord> => {
    try {
      assertIdentifier('chat', 'chatId', chatId);
    } catch {
      throw noChat(chatId);
    }
    const chat = await store.getChat(chatId);
    if (chat === null || chat.userId !== userId) throw noChat(chatId);
    return chat;
  };
  /** The branch a tool means by default in `chat`: the conversation's in its own chat. */
  const defaultBranch = (chat: ChatRecord): string =>
    chat.id === currentChat ? (options.branch ?? chat.activeBranch) : chat.activeBranch;

  const listBranches: ListBranchesTool = tool({
    description:
      'Lists the branches of a chat (this one by default): each with its newest message, its message count, and the node id of its head (to read it with readBranch).',
    inputSchema: historyInputs.listBranches.schema,
    execute: (input) =>
      answer<ListBranchesInput, ListBranchesResult>(
        'listBranches',
        input,
        (checked) => checked.chatId ?? currentChat,
        async (checked) => {
          const chat = await ownedChat(checked.chatId ?? currentChat);
          // One read of the chat's graph: every branch's message count in one pass over its nodes.
          const graph = await store.getGraph(chat.id);
          const depth = chainLengths(graph.nodes);
          const byId = new Map(graph.nodes.map((node) => [node.id, node]));
          const branches = [...graph.branches]
            .sort((left, right) => right.updatedAt - left.updatedAt)
            .slice(0, checked.limit ?? 20)
            .map((branch): HistoryBranch => {
              const head =
                branch.headMessageId === null ? undefined : byId.get(branch.headMessageId);
              return {
                name: branch.name,
                head: branch.headMessageId,
                messages: head === undefined ? 0 : (depth.get(head.id) ?? 0),
                updatedAt: new Date(branch.updatedAt).toISOString(),
                last:
                  head === undefined
                    ? null
                    : {
                        role: head.message.role,
                        preview: preview(head),
                      },
              };
            });
          const limited = branches.length < graph.branches.length;
          return fitItems(tokenizer, maxResultTokens, branches, (kept, leftOut) => ({
            chatId: chat.id,
            title: chat.title,
            activeBranch: chat.activeBranch,
            ...(chat.id === currentChat ? { currentBranch: defaultBranch(chat) } : {}),
            branches: kept,
            totalBranches: graph.branches.length,
            truncated: leftOut || limited,
          })).result;
        },
        refuse,
      ),
  });

  const readBranch: ReadBranchTool = tool({
    description:
      "Reads a range of a branch's messages, oldest first, back from the branch's newest message (this conversation's branch by default) or from a node id (`end`: a search hit, or `older` of a previous read). Messages a summary replaced in your context are included, marked `summarizedBy` when that summary is in the same read; a summary is marked `compaction` (`coversThrough`: the last message it replaced). Continue further back with `end: older`.",
    inputSchema: historyInputs.readBranch.schema,
    execute: (input) =>
      answer<ReadBranchInput, ReadBranchResult>(
        'readBranch',
        input,
        (checked) => checked.chatId ?? currentChat,
        async (checked) => {
          if (checked.end !== undefined && checked.branch !== undefined)
            throw new Refusal(
              'readBranch: give branch (read back from its newest message) or end (read back from that node), not both.',
            );
          const chat = await ownedChat(checked.chatId ?? currentChat);
          let branchName: string | null = null;
          let end = checked.end;
          if (end === undefined) {
            branchName = checked.branch ?? defaultBranch(chat);
            const branch = await store.getBranch({ chatId: chat.id, name: branchName });
            if (branch === null)
              throw new Refusal(
                `No branch ${JSON.stringify(branchName)} in chat ${JSON.stringify(chat.id)} (listBranches lists them).`,
              );
            if (branch.headMessageId === null)
              return {
                chatId: chat.id,
                branch: branchName,
                messages: [],
                older: null,
                truncated: false,
              };
            end = branch.headMessageId;
          }
          // A bounded read: the `limit` nodes ending at `end`, whatever the length of the chain.
          const page = await store.getChain({
            chatId: chat.id,
            headMessageId: end,
            limit: checked.limit ?? 20,
          });
          const messages = historyMessages(page.nodes);
          // Newest first: a result too large keeps the messages nearest `end`; each message at
          // most a quarter of the room, so a long one does not crowd out the rest.
          const perMessage = Math.floor(maxResultTokens / 4);
          const newestFirst = messages
            .map((message): HistoryMessage => {
              const { text, cut } = cutText(tokenizer, message.text, perMessage);
              return cut ? { ...message, text, cut: true } : message;
            })
            .reverse();
          const oldestParent = new Map(page.nodes.map((node) => [node.id, node.parentId]));
          const fitted = fitItems(tokenizer, maxResultTokens, newestFirst, (kept, leftOut) => ({
            chatId: chat.id,
            branch: branchName,
            messages: [...kept].reverse(),
            older:
              kept.length === 0
                ? (end ?? null)
                : (oldestParent.get((kept.at(-1) as HistoryMessage).node) ?? null),
            truncated: leftOut || kept.some((message) => message.cut === true),
          }));
          return fitted.result;
        },
        refuse,
      ),
  });

  const tools = { listBranches, readBranch };
  if (store.capabilities?.search !== true || typeof store.searchMessages !== 'function')
    return tools;
  const search = store.searchMessages.bind(store);

  const searchHistory: SearchHistoryTool = tool({
    description:
      "Searches the stored conversation history by words (every word must match): scope 'branch' (this conversation's branch, including what a summary replaced), 'chat' (every branch of this chat) or 'user' (every chat of the user). Each hit names its node (read it with readBranch's `end`) and the branches that hold it.",
    inputSchema: historyInputs.searchHistory.schema,
    execute: (input) =>
      answer<SearchHistoryInput, SearchHistoryResult>(
        'searchHistory',
        input,
        (checked) => checked.chatId ?? currentChat,
        async (checked) => {
          const { scope } = checked;
          if (scope === 'user' && (checked.chatId !== undefined || checked.branch !== undefined))
            throw new Refusal("searchHistory: scope 'user' takes no chatId or branch.");
          if (scope === 'chat' && checked.branch !== undefined)
            throw new Refusal("searchHistory: branch is only for scope 'branch'.");
          let chat: ChatRecord | undefined;
          if (scope !== 'user') chat = await ownedChat(checked.chatId ?? currentChat);
          const request = {
            userId,
            query: checked.query,
            ...(chat === undefined ? {} : { chatId: chat.id }),
            ...(scope === 'branch' && chat !== undefined
              ? { branch: checked.branch ?? defaultBranch(chat) }
              : {}),
            limit: checked.limit ?? 10,
            ...(checked.cursor === undefined ? {} : { cursor: checked.cursor }),
          };
          const page = await search(request);
          // The store searched this user's chats only; a hit of another user's chat would be a
          // broken store, and is never shown.
          const own = page.items.filter((hit) => chat === undefined || hit.chatId === chat.id);
          const titles =
            scope === 'user'
              ? await titlesOf(
                  store,
                  userId,
                  own.map((hit) => hit.chatId),
                )
              : null;
          const hits = own
            .filter((hit) => titles === null || titles.has(hit.chatId))
            .map((hit): HistoryHit => {
              const names = hit.branches.slice(0, BRANCH_NAMES_PER_HIT);
              return {
                chatId: hit.chatId,
                ...(titles === null ? {} : { chatTitle: titles.get(hit.chatId) ?? null }),
                node: hit.messageId,
                role: hit.role,
                snippet: hit.snippet,
                branches: names,
                ...(hit.branches.length > names.length
                  ? { moreBranches: hit.branches.length - names.length }
                  : {}),
              };
            });
          const fitted = fitItems(tokenizer, maxResultTokens, hits, (kept, leftOut) => ({
            scope,
            hits: kept,
            nextCursor: page.nextCursor,
            truncated: leftOut,
          }));
          if (!fitted.leftOut || fitted.kept.length === 0) return fitted.result;
          // Hits left out for room are the next page's: the same search for as many hits as were
          // kept ends where they end (the order is fixed: score, chat, sequence).
          const shorter = await search({ ...request, limit: fitted.kept.length });
          return { ...fitted.result, nextCursor: shorter.nextCursor };
        },
        refuse,
      ),
  });
  return { searchHistory, ...tools };
}

/** Each node's chain length (itself and its ancestors): one pass, parents before children. */
function chainLengths(nodes: readonly MessageNodeRecord[]): Map<string, number> {
  const ordered = [...nodes].sort((left, right) => left.sequence - right.sequence);
  const depth = new Map<string, number>();
  for (const node of ordered) {
    const parent = node.parentId === null ? 0 : (depth.get(node.parentId) ?? 0);
    depth.set(node.id, parent + 1);
  }
  return depth;
}

function preview(node: MessageNodeRecord): string {
  if (readDropped(node) !== null) return '';
  const text = messageText(node.message).replace(/\s+/g, ' ').trim();
  return text.length > PREVIEW_CHARACTERS ? `${text.slice(0, PREVIEW_CHARACTERS)}…` : text;
}

/**
 * The nodes of a chain page (oldest first) as the model reads them: each compaction node marked
 * with the span it replaced, and each node of that span inside the page marked with the summary
 * that replaced it (the newest compaction of the page first: what the conversation shows).
 */
function historyMessages(nodes: readonly MessageNodeRecord[]): HistoryMessage[] {
  const position = new Map(nodes.map((node, index) => [node.id, index]));
  const summarizedBy: (string | undefined)[] = nodes.map(() => undefined);
  for (let index = nodes.length - 1; index >= 0; index -= 1) {
    const node = nodes[index] as MessageNodeRecord;
    const compaction = readCompaction(node);
    if (compaction === null) continue;
    const boundary = position.get(compaction.boundaryId);
    if (boundary === undefined || boundary >= index) continue;
    for (let covered = boundary; covered >= 0; covered -= 1) summarizedBy[covered] ??= node.id;
  }
  return nodes.map((node, index): HistoryMessage => {
    const compaction = readCompaction(node);
    const dropped = readDropped(node);
    const summary = readBranchSummary(node);
    const by = dropped?.compactionId ?? summarizedBy[index];
    return {
      node: node.id,
      role: node.message.role,
      text: dropped === null ? messageText(node.message) : '',
      ...(compaction === null
        ? {}
        : {
            compaction: {
              coversThrough: compaction.boundaryId,
              coveredMessages: compaction.coveredMessages,
            },
          }),
      ...(by === undefined ? {} : { summarizedBy: by }),
      ...(dropped === null ? {} : { dropped: true as const }),
      ...(summary === null ? {} : { summaryOfBranch: summary.fromBranch }),
    };
  });
}

/** The titles of the user's chats among `chatIds` (a chat of another user is left out). */
async function titlesOf(
  store: ContextStore,
  userId: string,
  chatIds: readonly string[],
): Promise<Map<string, string | null>> {
  const titles = new Map<string, string | null>();
  const unique = [...new Set(chatIds)];
  const chats = await Promise.all(unique.map((chatId) => store.getChat(chatId)));
  for (const chat of chats)
    if (chat !== null && chat.userId === userId) titles.set(chat.id, chat.title);
  return titles;
}
