import type { MessageSchemas } from '@ctxgraph/codecs';
import {
  assertIdentifier,
  assertJsonObject,
  type ContextRenderer,
  type ContextStore,
  createEstimatorTokenizer,
  EngineError,
  isTokenizer,
  type JsonObject,
  type Tokenizer,
  UnsupportedSpecificationError,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { defaultSerializer } from '@ctxgraph/serialization';
import type { PruneOptions, SwitchBranchOptions } from './branches/branch-operations';
import {
  type AutoCompactOptions,
  type CheckedAutoCompact,
  checkAutoCompact,
} from './compaction/auto-compact';
import type { ContextSerializer } from './context-lane/context-lane';
import type { ContinueFromOptions } from './messages/message-graph';
import { type ModelPrices, modelPricesProblem } from './model-prices';
import type { ResolveOptions } from './resolve/budgeted-resolve';
import { type CheckedBudget, checkBudget } from './resolve/fit-to-budget';
import type { SessionOptions } from './session/chat-session';
import { assertWholeStore } from './session/store-abilities';

/** Options of {@link ContextEngine}. */
export interface ContextEngineOptions {
  /** Where the conversation graph lives. */
  store: ContextStore;
  /** The chat to open (created on first use). */
  chatId: string;
  /** The user working in it; a chat owned by someone else is refused. */
  userId: string;
  /** Metadata for a new chat; merged into an existing chat's metadata. */
  metadata?: JsonObject;
  /** The renderer `resolve()`, `render()` and `inspect()` use when none is passed to them. */
  renderer?: ContextRenderer;
  /**
   * Schemas the AI SDK validates messages against (`metadataSchema`, `dataSchemas`, `tools`).
   * Without them, metadata, data parts and tool payloads are only checked for shape.
   */
  messageSchemas?: MessageSchemas;
  /**
   * What `resolve()` does with a stored message that no longer validates (a tool whose schema
   * changed, say): `'throw'` refuses to resolve, `'skip'` leaves it out (`inspect()` lists it).
   * @default 'throw'
   */
  onInvalidMessage?: 'throw' | 'skip';
  /**
   * How often `save()` re-reads the head and tries again when other writers keep moving it.
   * @default 25
   */
  maxSaveAttempts?: number;
  /** Prices used by `inspect()` and `usage()`, merged over the built-in table. */
  prices?: ModelPrices;
  /**
   * How `loadContext()` / `saveContext()` turn context fragments into stored JSON and back.
   * @default `defaultSerializer` of `@ctxgraph/serialization` (every built-in fragment type)
   */
  contextSerializer?: ContextSerializer;
  /**
   * Counts tokens for `resolve({ budget })` and `inspect()`. Install a counter for your model
   * (`o200kTokenizer` of `@ctxgraph/tokenizer-o200k`, `cl100kTokenizer` of
   * `@ctxgraph/tokenizer-cl100k`) or pass any `Tokenizer`.
   * @default `createEstimatorTokenizer()` of `@ctxgraph/fragments-core` (about 4 characters a token)
   */
  tokenizer?: Tokenizer;
  /**
   * With `resolve({ budget })`: compact the branch (a summary node, see `compact()`) before the
   * budget would leave history out, once the input passes `threshold` of the budget. Off unless
   * given.
   */
  autoCompact?: AutoCompactOptions;
  /**
   * Calibrate budgets by reported usage: each reply saved with `withUsage(…, { cache:
   * result.budget.cache })` records the budget's count of the call's input beside the provider's
   * reported input tokens, and the next `resolve({ budget })` on the path multiplies its counts
   * by that model's factor (its newest sample's ratio, or the median of its last three when the
   * newest lies more than 25% from it; absurd samples are left out).
   * The samples live in the replies' records, so a new engine on the chat starts calibrated.
   * `false` plans with the tokenizer's counts as they are (the samples are still recorded).
   * @default true
   */
  calibration?: boolean;
}

/** What {@link ContextEngine.save} returns. */
export interface SaveResult {
  /** The branch head after saving (undefined while the branch has no message). */
  headMessageId: string | undefined;
}

/** Options of {@link ContextEngine.usage}. */
export interface UsageOptions {
  /** `'branch'`: the active branch's saved messages; `'chat'`: every message of the chat. @default 'branch' */
  scope?: 'branch' | 'chat';
  /** Prices for this call, over the engine's and the built-in ones. */
  prices?: ModelPrices;
}

/** The engine's options, checked, with their defaults. */
export interface EngineSettings extends SessionOptions {
  readonly renderer: ContextRenderer | undefined;
  readonly serializer: ContextSerializer;
  readonly autoCompact: CheckedAutoCompact | undefined;
}

/** Checks `new ContextEngine(options)`; throws the error that says which option is wrong. */
export function checkEngineOptions(options: ContextEngineOptions): EngineSettings {
  const method = 'new ContextEngine(options)';
  if (typeof options !== 'object' || options === null) {
    throw new ValidationError(
      `${method}: options must be an object with store, chatId and userId.`,
    );
  }
  const store = options.store as Partial<ContextStore> | undefined;
  if (typeof store !== 'object' || store === null || typeof store.commit !== 'function') {
    throw new ValidationError(
      `${method}: store must be a ContextStore (for example new InMemoryContextStore()).`,
      { issues: [{ path: 'store', message: 'expected a ContextStore' }] },
    );
  }
  if (store.specificationVersion !== 'v1') {
    throw new UnsupportedSpecificationError(
      `${method}: the store implements ContextStore specification ${JSON.stringify(store.specificationVersion)}, but this engine supports "v1". Upgrade the store or the engine so they match.`,
    );
  }
  assertWholeStore(store, method);
  assertIdentifier(method, 'chatId', options.chatId);
  assertIdentifier(method, 'userId', options.userId);
  if (options.metadata !== undefined) assertJsonObject(method, 'metadata', options.metadata);
  if (options.renderer !== undefined) checkRenderer(options.renderer, method);
  const onInvalidMessage = options.onInvalidMessage ?? 'throw';
  if (onInvalidMessage !== 'throw' && onInvalidMessage !== 'skip') {
    throw new ValidationError(
      `${method}: onInvalidMessage must be 'throw' or 'skip', received ${JSON.stringify(onInvalidMessage)}.`,
    );
  }
  const maxSaveAttempts = options.maxSaveAttempts ?? 25;
  if (!Number.isInteger(maxSaveAttempts) || maxSaveAttempts < 1) {
    throw new ValidationError(
      `${method}: maxSaveAttempts must be a positive integer, received ${String(maxSaveAttempts)}.`,
    );
  }
  const pricesProblem = modelPricesProblem(method, options.prices);
  if (pricesProblem) throw pricesProblem;
  if (options.tokenizer !== undefined && !isTokenizer(options.tokenizer)) {
    throw new ValidationError(
      `${method}: tokenizer must be a Tokenizer (an object with id and count(text)), such as o200kTokenizer from @ctxgraph/tokenizer-o200k.`,
      { issues: [{ path: 'tokenizer', message: 'expected a Tokenizer' }] },
    );
  }
  if (options.calibration !== undefined && typeof options.calibration !== 'boolean') {
    throw new ValidationError(
      `${method}: calibration must be a boolean or omitted, received ${JSON.stringify(options.calibration) ?? typeof options.calibration}.`,
      { issues: [{ path: 'calibration', message: 'expected a boolean' }] },
    );
  }
  return {
    store: options.store,
    chatId: options.chatId,
    userId: options.userId,
    metadata: options.metadata,
    renderer: options.renderer,
    messageSchemas: options.messageSchemas ?? {},
    onInvalidMessage,
    maxSaveAttempts,
    prices: options.prices,
    serializer: options.contextSerializer ?? defaultSerializer,
    tokenizer: options.tokenizer ?? createEstimatorTokenizer(),
    autoCompact:
      options.autoCompact === undefined ? undefined : checkAutoCompact(method, options.autoCompact),
    calibration: options.calibration ?? true,
  };
}

/** What is wrong with `prune`'s option values, if anything. */
export function pruneOptionsProblem(
  options: PruneOptions | undefined,
): ValidationError | undefined {
  if (options?.dryRun !== undefined && typeof options.dryRun !== 'boolean')
    return new ValidationError(
      `prune(options): dryRun must be a boolean, received ${JSON.stringify(options.dryRun)}.`,
      { issues: [{ path: 'dryRun', message: 'expected a boolean' }] },
    );
  const compacted: unknown = options?.compacted;
  if (compacted !== undefined && compacted !== 'keep' && compacted !== 'drop')
    return new ValidationError(
      `prune(options): compacted must be 'keep' or 'drop', received ${JSON.stringify(compacted)}.`,
      { issues: [{ path: 'compacted', message: "expected 'keep' or 'drop'" }] },
    );
  return undefined;
}

/** The error for an options argument that is neither omitted nor an object, if it is one. */
export function optionsProblem(method: string, options: unknown): ValidationError | undefined {
  if (options === undefined) return undefined;
  if (typeof options === 'object' && options !== null && !Array.isArray(options)) return undefined;
  const received = options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options;
  return new ValidationError(
    `${method}: options must be an object or omitted, received ${received}.`,
    { issues: [{ path: 'options', message: 'expected an object' }] },
  );
}

/** The problem of `continueFrom()`'s options (an object, `activate` a boolean), or undefined. */
export function continueFromProblem(options: ContinueFromOptions | undefined): Error | undefined {
  const method = 'continueFrom(nodeId, options)';
  const activate = options?.activate;
  if (activate === undefined || typeof activate === 'boolean')
    return optionsProblem(method, options);
  return new ValidationError(`${method}: activate must be a boolean or omitted.`, {
    issues: [{ path: 'activate', message: 'expected a boolean' }],
  });
}

/** The renderer a call uses (its own, else the engine's), checked. */
export function pickRenderer(
  renderer: ContextRenderer | undefined,
  fallback: ContextRenderer | undefined,
  method: string,
): ContextRenderer {
  const chosen = renderer ?? fallback;
  if (chosen === undefined) {
    throw new EngineError(
      `${method}: no renderer. Pass one (for example { renderer: new XmlRenderer() } from @ctxgraph/renderer-xml) or give the engine a default with new ContextEngine({ renderer }).`,
    );
  }
  checkRenderer(chosen, method);
  return chosen;
}

function checkRenderer(renderer: ContextRenderer, method: string): void {
  if (typeof renderer !== 'object' || renderer === null || typeof renderer.render !== 'function') {
    throw new ValidationError(
      `${method}: renderer must be a ContextRenderer (an object with render(fragments)).`,
      { issues: [{ path: 'renderer', message: 'expected a ContextRenderer' }] },
    );
  }
  if (renderer.specificationVersion !== 'v1') {
    throw new UnsupportedSpecificationError(
      `${method}: the renderer implements ContextRenderer specification ${JSON.stringify(renderer.specificationVersion)}, but this engine supports "v1".`,
    );
  }
}

/** `resolve()`'s options, checked. */
export interface CheckedResolveOptions {
  readonly format: 'ui' | 'model' | undefined;
  readonly budget: CheckedBudget | undefined;
}

/** Checks `resolve()`'s options (the object, then `format`, then `budget`). */
export function checkResolveOptions(options: ResolveOptions | undefined): CheckedResolveOptions {
  const problem = optionsProblem('resolve(options)', options);
  if (problem) throw problem;
  const format = options?.format;
  if (format !== undefined && format !== 'ui' && format !== 'model') {
    throw new ValidationError(
      `resolve(options): format must be 'ui' or 'model', received ${JSON.stringify(format)}.`,
    );
  }
  const budget =
    options?.budget === undefined ? undefined : checkBudget('resolve(options)', options.budget);
  return { format, budget };
}

/** What is wrong with an options object that may carry `prices`, if anything. */
export function pricedOptionsProblem(
  method: string,
  options: { readonly prices?: ModelPrices } | undefined,
): ValidationError | undefined {
  return optionsProblem(method, options) ?? modelPricesProblem(method, options?.prices);
}

/** What is wrong with `usage()`'s options, if anything. */
export function usageOptionsProblem(
  options: UsageOptions | undefined,
): ValidationError | undefined {
  const problem = pricedOptionsProblem('usage(options)', options);
  if (problem) return problem;
  const scope = options?.scope ?? 'branch';
  if (scope !== 'branch' && scope !== 'chat') {
    return new ValidationError(
      `usage(options): scope must be 'branch' or 'chat', received ${JSON.stringify(scope)}.`,
    );
  }
  return undefined;
}

/** What is wrong with `switchBranch()`'s options, if anything. */
export function switchOptionsProblem(
  options: SwitchBranchOptions | undefined,
): ValidationError | undefined {
  const problem = optionsProblem('switchBranch(name, options)', options);
  if (problem) return problem;
  const carry = options?.carry;
  if (carry !== undefined && typeof carry?.summarize !== 'function') {
    return new ValidationError(
      'switchBranch(name, options): carry must be { summarize } with a summarizer function (for example summarizer({ model })).',
      { issues: [{ path: 'carry.summarize', message: 'expected a function' }] },
    );
  }
  return undefined;
}
