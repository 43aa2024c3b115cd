import {
  type BranchRecord,
  type BudgetShortfall,
  type ChatGraph,
  type ChatRecord,
  type CheckpointRecord,
  type CompactionRecord,
  type ContextFragment,
  type ContextRenderer,
  isFragment,
  type JsonValue,
  type MessageNodeRecord,
  readCompaction,
  type Tokenizer,
  type ValidationError,
} from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import type { BudgetReport } from './budget/budget-report';
import { estimateNextCall, type NextCallEstimate } from './budget/next-call';
import { messageText } from './budget/token-counter';
import { cacheModelOf } from './cache/cache-profile';
import { branchUsage, pricesFor } from './chat-usage';
import { visibleConversation } from './compaction/compacted-view';
import { pickRenderer, pricedOptionsProblem } from './context-engine-options';
import { pendingMessages } from './conversation/conversation';
import type { EngineParts } from './engine-parts';
import { DEFAULT_MODEL_PRICES, findModelPrice, type ModelPrices } from './model-prices';
import type { BudgetPlanner } from './resolve/budgeted-resolve';
import { type BudgetOptions, type CheckedBudget, checkBudget } from './resolve/fit-to-budget';
import { appliedCompaction } from './session/chain-reads';
import type { ChatSession } from './session/chat-session';
import { calibrationOnPath, calibrationSamples } from './usage/input-calibration';
import { totalUsage, type UsageTotals } from './usage/usage-totals';

/** Options of `ContextEngine.inspect`. */
export interface InspectOptions {
  /** The model the prompt is meant for (`'openai:gpt-4o'`, `'gpt-4.1-mini'`), for the cost estimate. */
  modelId?: string;
  /** How to render the context fragments; defaults to the engine's renderer. */
  renderer?: ContextRenderer;
  /** Prices for this call, over the engine's and the built-in ones. */
  prices?: ModelPrices;
  /**
   * Plan as `resolve({ budget })` would now, without sending or remembering anything: the
   * snapshot's `budget` then says what would be kept and left out, how many leading tokens the
   * call would share with the last budgeted call on this branch, and what the provider is
   * predicted to read from its cache. A budget that names neither `model` nor `cacheProfile` is
   * planned for `modelId` (its cache profile: `'gpt-4o-mini'` OpenAI's, a model with no known
   * cache none).
   */
  budget?: BudgetOptions;
}

/**
 * The cache-aware cost of the next call: {@link estimateNextCall} of the plan, whose cache
 * prediction follows the profile of the model asked about.
 */
export type InspectNextCall = NextCallEstimate;

/** The token and cost estimate of what `resolve()` would send. */
export interface InspectEstimate {
  /** The model asked about, if any. */
  modelId: string | null;
  /**
   * The engine's tokenizer (`Tokenizer.id`: `'o200k_base'`, `'estimate:4.00'` for the default
   * estimator, …).
   */
  tokenizer: string;
  /** Tokens of the system prompt plus every message's text and parts. */
  tokens: number;
  /** The split of `tokens`. */
  breakdown: { systemPrompt: number; persisted: number; pending: number };
  /** Input cost in USD, or null when the model's price is not known (see `note`). */
  cost: number | null;
  /** The price used, USD per million input tokens, or null. */
  pricePerMillionInputTokens: number | null;
  /** Why there is no cost, or what the figure covers. */
  note: string;
}

/** A node of the inspected graph. */
export interface InspectNode {
  id: string;
  parentId: string | null;
  role: string;
  sequence: number;
  /** The message's text parts, joined (a preview; the full message is in the lanes). */
  text: string;
  createdAt: number;
}

/** A compaction node of the inspected graph: the span it replaces and what that saved. */
export interface InspectCompaction {
  /** The compaction node's id. */
  id: string;
  /** The last node the span covers. */
  boundaryId: string;
  /** The compaction whose view the span starts with, or null (from the root). */
  previousCompactionId: string | null;
  /** How many messages the summary replaces. */
  coveredMessages: number;
  /** Tokens of the span, of the summary, and saved (`covered - summary`). */
  tokens: CompactionRecord['tokens'];
  /** When it was made. */
  createdAt: number;
  /** True when it shapes what the active branch sends now (the newest on its chain). */
  applied: boolean;
}

/** One reply's calibration sample, as `inspect()` shows it. */
export interface InspectCalibrationSample {
  /** The reply (node id) whose usage holds the sample. */
  messageId: string;
  modelId: string;
  /** The budget's count of the call's input (the tokenizer's count). */
  counted: number;
  /** The factor the budget used for the call. */
  factor: number;
  /** What the budget expected the provider to report: `counted × factor`, rounded. */
  predicted: number;
  /** What the provider reported, or null. */
  reported: number | null;
  /** `reported ÷ predicted − 1` (0.03 is 3% more than predicted), or null. */
  drift: number | null;
  /** False when the sample was left out as absurd. */
  accepted: boolean;
}

/** The budget's calibration on the active branch (see `ContextEngineOptions.calibration`). */
export interface InspectCalibration {
  /** The engine's tokenizer, whose counts the factors correct. */
  tokenizer: string;
  /** False with `calibration: false` (the factors are recorded, not used). */
  enabled: boolean;
  /** Each calibrated model's factor (reported ÷ counted), the most recently sampled first. */
  models: Array<{ modelId: string; factor: number; samples: number }>;
  /** The newest samples on the branch (at most 10), newest first. */
  samples: InspectCalibrationSample[];
}

/** The JSON-safe snapshot `ContextEngine.inspect` returns. */
export interface InspectSnapshot {
  estimate: InspectEstimate;
  /**
   * With `inspect({ budget })`: the plan `resolve({ budget })` would make now (with its prefix
   * report), or `{ exceeded }` when the required parts do not fit; null without `budget`.
   */
  budget: BudgetReport | { exceeded: BudgetShortfall } | null;
  /** With `budget` and `modelId`: the next call's cache-aware cost. */
  nextCall: InspectNextCall | null;
  /** Recorded usage (`withUsage`) added up over the active branch and over the whole chat. */
  usage: { branch: UsageTotals; chat: UsageTotals };
  /** The budget's calibration by reported usage: the factors in use and the recent drift. */
  calibration: InspectCalibration;
  /** The rendered system prompt. */
  rendered: string;
  /** The three lanes. */
  fragments: {
    /** The context fragments as plain JSON (codecs and functions left out). */
    context: JsonValue[];
    /** Messages waiting for `save()`, encoded. */
    pending: UIMessage[];
    /** The branch's saved messages, oldest first. */
    persisted: UIMessage[];
    /** Saved messages that no longer validate, with the reason. */
    invalid: Array<{ id: string; error: string }>;
  };
  /** The chat's whole graph. */
  graph: { nodes: InspectNode[]; branches: BranchRecord[]; checkpoints: CheckpointRecord[] };
  /** Every compaction node of the chat, oldest first. */
  compactions: InspectCompaction[];
  /** Where the engine stands. */
  meta: {
    chatId: string;
    userId: string;
    branch: string;
    headMessageId: string | null;
    renderer: string;
    timestamp: number;
    chat: ChatRecord;
  };
}

/** Everything {@link buildSnapshot} needs from the engine. */
interface SnapshotInput {
  options: InspectOptions;
  tokenizer: Tokenizer;
  budget: BudgetReport | { exceeded: BudgetShortfall } | null;
  usage: { branch: UsageTotals; chat: UsageTotals };
  calibration: InspectCalibration;
  prices: ModelPrices | undefined;
  rendererFormat: string;
  rendered: string;
  context: readonly ContextFragment[];
  pending: readonly UIMessage[];
  persisted: ReadonlyArray<{
    node: MessageNodeRecord;
    message: UIMessage | null;
    error: ValidationError | null;
  }>;
  graph: ChatGraph;
  chatId: string;
  userId: string;
  branch: string;
  headMessageId: string | null;
  /** The compaction node that shapes the active branch's conversation, if any. */
  appliedCompactionId: string | null;
}

/** Builds the snapshot, counting with the engine's tokenizer. */
function buildSnapshot(input: SnapshotInput): InspectSnapshot {
  const countTokens = (text: string): number => input.tokenizer.count(text);
  const persisted = input.persisted.flatMap((entry) => (entry.message ? [entry.message] : []));
  const messageTokens = (messages: readonly UIMessage[]): number =>
    messages.reduce((total, message) => total + countTokens(messageText(message)), 0);
  const breakdown = {
    systemPrompt: input.rendered === '' ? 0 : countTokens(input.rendered),
    persisted: messageTokens(persisted),
    pending: messageTokens(input.pending),
  };
  const tokens = breakdown.systemPrompt + breakdown.persisted + breakdown.pending;
  const prices = { ...DEFAULT_MODEL_PRICES, ...input.prices, ...input.options.prices };
  const modelId = input.options.modelId ?? null;
  return {
    estimate: estimate(tokens, breakdown, input.tokenizer.id, modelId, prices),
    budget: input.budget,
    nextCall:
      input.budget === null || 'exceeded' in input.budget
        ? null
        : estimateNextCall(input.budget, { modelId, prices }),
    usage: input.usage,
    calibration: input.calibration,
    rendered: input.rendered,
    fragments: {
      context: input.context.map((fragment) => toJson(fragment, 0)),
      pending: input.pending.slice(),
      persisted,
      invalid: input.persisted.flatMap((entry) =>
        entry.error ? [{ id: entry.node.id, error: entry.error.message }] : [],
      ),
    },
    graph: {
      nodes: input.graph.nodes.map((node) => ({
        id: node.id,
        parentId: node.parentId,
        role: node.message.role,
        sequence: node.sequence,
        text: messageText(node.message as unknown as UIMessage),
        createdAt: node.createdAt,
      })),
      branches: input.graph.branches.slice(),
      checkpoints: input.graph.checkpoints.slice(),
    },
    compactions: input.graph.nodes.flatMap((node) => {
      const record = readCompaction(node);
      if (record === null) return [];
      return [
        {
          id: node.id,
          boundaryId: record.boundaryId,
          previousCompactionId: record.previousCompactionId,
          coveredMessages: record.coveredMessages,
          tokens: record.tokens,
          createdAt: record.createdAt,
          applied: node.id === input.appliedCompactionId,
        },
      ];
    }),
    meta: {
      chatId: input.chatId,
      userId: input.userId,
      branch: input.branch,
      headMessageId: input.headMessageId,
      renderer: input.rendererFormat,
      timestamp: Date.now(),
      chat: input.graph.chat,
    },
  };
}

function estimate(
  tokens: number,
  breakdown: InspectEstimate['breakdown'],
  tokenizer: string,
  modelId: string | null,
  prices: ModelPrices,
): InspectEstimate {
  const base = { modelId, tokenizer, tokens, breakdown };
  if (modelId === null) {
    return {
      ...base,
      cost: null,
      pricePerMillionInputTokens: null,
      note: 'No modelId given, so no cost estimate.',
    };
  }
  const found = findModelPrice(modelId, prices);
  if (found === undefined) {
    return {
      ...base,
      cost: null,
      pricePerMillionInputTokens: null,
      note: `The price of "${modelId}" is not known; pass prices: { "${modelId}": <USD per million input tokens> } for a cost.`,
    };
  }
  return {
    ...base,
    cost: (tokens * found.input) / 1_000_000,
    pricePerMillionInputTokens: found.input,
    note: `Input tokens only, at ${found.input} USD per million (${found.model}).`,
  };
}

function toJson(value: unknown, depth: number): JsonValue {
  if (depth > 64) return '[too deep]';
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value))
    return value.filter((item) => item !== undefined).map((item) => toJson(item, depth + 1));
  if (isFragment(value)) {
    const result: { [key: string]: JsonValue } = {
      name: value.name,
      data: toJson(value.data, depth + 1),
    };
    if (value.id !== undefined) result.id = value.id;
    if (value.type !== undefined) result.type = value.type;
    return result;
  }
  if (typeof value === 'object') {
    const result: { [key: string]: JsonValue } = {};
    for (const [key, entry] of Object.entries(value)) {
      // Keys come from data (fragment data, model ids): define them, so `__proto__` stays an own
      // entry instead of replacing the copy's prototype.
      if (entry !== undefined && typeof entry !== 'function')
        Object.defineProperty(result, key, {
          value: toJson(entry, depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
    }
    return result;
  }
  return String(value);
}

/**
 * The budget `inspect({ budget })` plans with: a budget that names no model nor profile is for
 * `modelId`, so the cache prediction follows that model's profile (not the default marks).
 */
function plannedFor(options: BudgetOptions, modelId: string | undefined): CheckedBudget {
  const budget = checkBudget('inspect(options)', options);
  if (
    typeof modelId !== 'string' ||
    modelId === '' ||
    budget.model !== undefined ||
    budget.cacheProfile !== undefined ||
    budget.cacheMarkers === 'none'
  )
    return budget;
  return { ...budget, model: cacheModelOf(modelId) };
}

/** The calibration on the view's branch, from the records of the shown conversation. */
function calibrationOf(session: ChatSession): InspectCalibration {
  const { chain } = session.view;
  const tokenizer = session.settings.tokenizer.id;
  const from = (appliedCompaction(chain)?.boundaryPosition ?? -1) + 1;
  const models = calibrationOnPath(chain.entries, from, tokenizer);
  return {
    tokenizer,
    enabled: session.settings.calibration,
    models: models.map(({ modelId, factor, samples }) => ({ modelId, factor, samples })),
    samples: calibrationSamples(chain.entries, from, 10).map(({ messageId, modelId, record }) => {
      const predicted = Math.round(record.counted * record.factor);
      return {
        messageId,
        modelId,
        counted: record.counted,
        factor: record.factor,
        predicted,
        reported: record.reported,
        drift:
          record.reported === null || predicted === 0
            ? null
            : Math.round((record.reported / predicted - 1) * 10_000) / 10_000,
        accepted: record.accepted,
      };
    }),
  };
}

/** One `inspect()` call, as the engine took it. */
interface InspectCall {
  readonly options: InspectOptions;
  readonly renderer: ContextRenderer;
  /** The context lane as the call sees it (read once the chat is open). */
  readonly context: () => readonly ContextFragment[];
  readonly ticket: number;
}

/**
 * `inspect()` as the engine takes it: checks the options at the call (a rejection, nothing
 * queued, for a bad one), then, in call order, inspects with the context lane as it was at the
 * call.
 */
export function inspectCall(
  parts: EngineParts,
  options: InspectOptions | undefined,
): Promise<InspectSnapshot> {
  const problem = pricedOptionsProblem('inspect(options)', options);
  if (problem !== undefined) return Promise.reject(problem);
  const context = parts.lane.atCall();
  return parts.session.run(async (ticket) => {
    const renderer = pickRenderer(options?.renderer, parts.renderer, 'inspect(options)');
    const call = { options: options ?? {}, renderer, context, ticket };
    return inspectChat(parts.session, parts.planner, call);
  });
}

/**
 * `inspect()`: renders, syncs the view, reads the chat's graph once, plans the budget without
 * remembering it, adds up usage, and builds the snapshot.
 */
async function inspectChat(
  session: ChatSession,
  planner: BudgetPlanner,
  call: InspectCall,
): Promise<InspectSnapshot> {
  const { options, renderer } = call;
  const opened = await session.open();
  const context = call.context();
  const rendered = renderer.render(context);
  const pending = await pendingMessages(session, call.ticket, opened);
  const graph = await session.store.getGraph(session.chatId);
  session.chat = graph.chat;
  const visible = visibleConversation(session.view.chain);
  const budget =
    options.budget === undefined
      ? null
      : planner.planDryRun(
          session,
          { budget: plannedFor(options.budget, options.modelId), renderer, fragments: context },
          pending,
        );
  const prices = pricesFor(session, options.prices);
  const usage = {
    branch: await branchUsage(session, prices),
    chat: totalUsage(graph.nodes, prices),
  };
  return buildSnapshot({
    options,
    tokenizer: session.settings.tokenizer,
    budget,
    usage,
    calibration: calibrationOf(session),
    prices: session.settings.prices,
    rendererFormat: renderer.format,
    rendered,
    context,
    pending,
    persisted: visible.entries,
    appliedCompactionId: visible.compaction?.entry.node.id ?? null,
    graph,
    chatId: session.chatId,
    userId: session.userId,
    branch: session.view.branch,
    headMessageId: session.view.headMessageId,
  });
}
