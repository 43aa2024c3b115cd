import { type ProviderCompactionRecord, ValidationError } from '@ctxgraph/fragments-core';

// A provider that compacts on its side returns the compaction inside the reply, and needs it back
// on every later call (it stands in for everything before it):
// - Anthropic (`@ai-sdk/anthropic`): a `text` content part whose provider metadata is
//   `{ anthropic: { type: 'compaction' } }`; in the response's model messages, a text part with
//   those `providerOptions`; in the UI message, a text part with that `providerMetadata`. The
//   provider turns such a part back into a compaction block when it is sent again.
// - OpenAI Responses (`@ai-sdk/openai` 4, AI SDK 7): a `custom` part of kind `'openai.compaction'`
//   whose provider metadata is `{ openai: { type: 'compaction', itemId, encryptedContent } }`.
//   (The AI SDK 6 line surfaces no compaction item, and its UI message schema has no custom part.)
//
// The engine trusts only what the server's own call produced: the compaction must be among the
// call's response messages (`result.response.messages`, passed to `withUsage`), never a part of a
// message alone, since a chat client can send any part it likes.

/** A compaction the call produced, found in its response messages. */
interface FoundCompaction {
  readonly provider: 'anthropic' | 'openai';
  /** Anthropic: the summary text. */
  readonly text?: string;
  /** OpenAI: the item id. */
  readonly itemId?: string;
  /** OpenAI: the item's encrypted content, when the provider gave it. */
  readonly encryptedContent?: string;
}

/** What `withUsage` keeps about the call's compaction until `save()` places it on the branch. */
export interface PendingProviderCompaction {
  readonly record: Omit<ProviderCompactionRecord, 'usage'> & {
    readonly usage?: ProviderCompactionRecord['usage'];
  };
  /** The text the provider sends back in place of the span (Anthropic's summary; '' for OpenAI). */
  readonly text: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function providerEntry(
  metadata: unknown,
  provider: 'anthropic' | 'openai',
): Record<string, unknown> | undefined {
  if (!isObject(metadata)) return undefined;
  const entry = metadata[provider];
  return isObject(entry) ? entry : undefined;
}

/** The compaction a content part holds, read with the key its form uses for provider data. */
function compactionOfPart(
  part: unknown,
  metadataKey: 'providerOptions' | 'providerMetadata',
): FoundCompaction | undefined {
  if (!isObject(part)) return undefined;
  if (part.type === 'text' && typeof part.text === 'string') {
    const anthropic = providerEntry(part[metadataKey], 'anthropic');
    if (anthropic?.type === 'compaction') return { provider: 'anthropic', text: part.text };
  }
  if (part.type === 'custom' && part.kind === 'openai.compaction') {
    const openai = providerEntry(part[metadataKey], 'openai');
    if (openai?.type === 'compaction' && typeof openai.itemId === 'string') {
      const { encryptedContent } = openai;
      return {
        provider: 'openai',
        itemId: openai.itemId,
        ...(typeof encryptedContent === 'string' ? { encryptedContent } : {}),
      };
    }
  }
  return undefined;
}

const where = 'withUsage(fragment, { response })';

/**
 * The compactions among a call's response messages (`result.response.messages`: the assistant
 * and tool messages this call produced), in order. Throws a `ValidationError` when `response` is
 * not `{ messages: [...] }`.
 */
function compactionsInResponse(response: unknown): FoundCompaction[] {
  if (!isObject(response) || !Array.isArray(response.messages)) {
    throw new ValidationError(
      `${where}: response must be the call's result.response (an object with the messages it produced).`,
      { issues: [{ path: 'response.messages', message: 'expected an array' }] },
    );
  }
  const found: FoundCompaction[] = [];
  for (const message of response.messages) {
    if (!isObject(message) || message.role !== 'assistant' || !Array.isArray(message.content))
      continue;
    for (const part of message.content) {
      const compaction = compactionOfPart(part, 'providerOptions');
      if (compaction !== undefined) found.push(compaction);
    }
  }
  return found;
}

/**
 * The provider compaction a reply carries: the newest compaction of the call's response that the
 * reply's parts hold (its index among them). Undefined when the call produced none. Throws a
 * `ValidationError` when the call produced one the reply does not carry (the provider would not
 * get it back, and the turns it replaced would be lost to the model).
 */
export function replyCompaction(
  parts: readonly unknown[],
  response: unknown,
  providerMetadata: unknown,
): PendingProviderCompaction | undefined {
  const produced = compactionsInResponse(response);
  const newest = produced.at(-1);
  if (newest === undefined) return undefined;
  let partIndex = -1;
  for (let index = parts.length - 1; index >= 0 && partIndex < 0; index -= 1) {
    const held = compactionOfPart(parts[index], 'providerMetadata');
    if (
      held !== undefined &&
      held.provider === newest.provider &&
      held.text === newest.text &&
      held.itemId === newest.itemId
    )
      partIndex = index;
  }
  if (partIndex < 0) {
    throw new ValidationError(
      `${where}: the call's response holds a ${newest.provider} compaction that the message does not carry. Set the reply the call produced (its parts include the compaction), so the provider gets it back on the next call.`,
      { issues: [{ path: 'fragment', message: 'the reply lacks the compaction part' }] },
    );
  }
  const usage = newest.provider === 'anthropic' ? compactionIterationUsage(providerMetadata) : null;
  // The content comes from the response (what the call produced), not from the reply's part:
  // the engine sends the compaction back from this record alone (`compaction/provider-parts.ts`).
  return {
    record: {
      provider: newest.provider,
      partIndex,
      ...(newest.itemId === undefined ? {} : { itemId: newest.itemId }),
      ...(newest.text === undefined ? {} : { text: newest.text }),
      ...(newest.encryptedContent === undefined
        ? {}
        : { encryptedContent: newest.encryptedContent }),
      ...(usage === null ? {} : { usage }),
    },
    text: newest.text ?? '',
  };
}

/** One of Anthropic's usage iterations as `@ai-sdk/anthropic` reports it (camel case). */
interface Iteration {
  readonly type: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
}

function tokens(value: unknown): number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0;
}

/** `providerMetadata.anthropic.iterations`, read defensively; null when absent. */
function anthropicIterations(providerMetadata: unknown): Iteration[] | null {
  const iterations = providerEntry(providerMetadata, 'anthropic')?.iterations;
  if (!Array.isArray(iterations)) return null;
  const read: Iteration[] = [];
  for (const iteration of iterations) {
    if (!isObject(iteration) || typeof iteration.type !== 'string') continue;
    read.push({
      type: iteration.type,
      inputTokens: tokens(iteration.inputTokens),
      outputTokens: tokens(iteration.outputTokens),
      cacheReadTokens: tokens(iteration.cacheReadInputTokens),
      cacheWriteTokens: tokens(iteration.cacheCreationInputTokens),
    });
  }
  return read;
}

/** The compaction iterations' usage summed, or null when the metadata lists none. */
function compactionIterationUsage(
  providerMetadata: unknown,
): ProviderCompactionRecord['usage'] | null {
  const compactions = (anthropicIterations(providerMetadata) ?? []).filter(
    (iteration) => iteration.type === 'compaction',
  );
  if (compactions.length === 0) return null;
  return {
    inputTokens: sum(compactions, 'inputTokens'),
    outputTokens: sum(compactions, 'outputTokens'),
    cacheReadTokens: sum(compactions, 'cacheReadTokens'),
    cacheWriteTokens: sum(compactions, 'cacheWriteTokens'),
  };
}

function sum(iterations: readonly Iteration[], key: keyof Omit<Iteration, 'type'>): number {
  return iterations.reduce((total, iteration) => total + iteration[key], 0);
}

/**
 * The cache tokens the AI SDK's usage leaves out of a call with Anthropic iterations.
 * `@ai-sdk/anthropic` already sums the executor iterations' (`compaction` and `message`) input
 * and output tokens into `usage.inputTokens` / `outputTokens`, but takes the cache reads and
 * writes from the top level of the provider's usage, which leaves out the compaction
 * iteration's. The iterations partition the call, so the executor iterations' cache figures are
 * the call's; what they hold beyond the top level (`providerMetadata.anthropic.usage`) is added.
 * Nothing is added for a turn a fallback served (the top level is the served answer) or without
 * iterations.
 */
export function anthropicCacheCorrection(providerMetadata: unknown): {
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
} {
  const none = { cacheReadTokens: 0, cacheWriteTokens: 0 };
  const iterations = anthropicIterations(providerMetadata);
  if (iterations === null || iterations.some((entry) => entry.type === 'fallback_message'))
    return none;
  const executor = iterations.filter(
    (entry) => entry.type === 'compaction' || entry.type === 'message',
  );
  if (executor.length === 0) return none;
  // Without the top level the SDK's figures came from, nothing can be told apart: add nothing.
  const raw = providerEntry(providerMetadata, 'anthropic')?.usage;
  if (!isObject(raw)) return none;
  const topRead = tokens(raw.cache_read_input_tokens);
  const topWrite = tokens(raw.cache_creation_input_tokens);
  return {
    cacheReadTokens: Math.max(0, sum(executor, 'cacheReadTokens') - topRead),
    cacheWriteTokens: Math.max(0, sum(executor, 'cacheWriteTokens') - topWrite),
  };
}
