import { toModelMessages } from '@ctxgraph/codecs';
import type { ModelMessage, SystemModelMessage, UIMessage } from 'ai';
import type { CacheBreakpoint } from './cache-profile';
import type { CacheMarkOutput, CacheModel, CacheProfile } from './cache-profiles';

/** Where the marks go and who places them. */
export interface MarkContext {
  readonly profile: CacheProfile;
  readonly model: CacheModel | null;
  readonly chatId: string;
  readonly branch: string;
}

/**
 * The provider option names that place a cache breakpoint or key a prompt cache: every one the
 * built-in profiles set (`anthropic.cacheControl`, `bedrock.cachePoint`,
 * `openrouter.cacheControl`, `openai.promptCacheBreakpoint`, and the call-level
 * `promptCacheKey` / `promptCacheOptions` / `promptCacheRetention`), and the snake-case
 * `cache_control` the Anthropic and OpenRouter providers also read. Removed under any provider
 * name: the same provider is reached under several (a gateway, Vertex's Anthropic models, an
 * app's own name for it), and each of these names means a cache mark wherever it is read.
 */
const CACHE_OPTION_NAMES: ReadonlySet<string> = new Set([
  'cacheControl',
  'cache_control',
  'cachePoint',
  'promptCacheBreakpoint',
  'promptCacheKey',
  'promptCacheOptions',
  'promptCacheRetention',
]);

type WithOptions = { readonly providerOptions?: unknown };

/** `holder` without the cache options in its `providerOptions` (itself when it has none). */
function withoutCacheOptions<T extends WithOptions>(holder: T): T {
  const options = holder.providerOptions;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return holder;
  let removed = false;
  const kept: [string, unknown][] = [];
  for (const [provider, values] of Object.entries(options)) {
    if (typeof values !== 'object' || values === null || Array.isArray(values)) {
      kept.push([provider, values]);
      continue;
    }
    const rest = Object.entries(values).filter(([name]) => !CACHE_OPTION_NAMES.has(name));
    if (rest.length === Object.keys(values).length) {
      kept.push([provider, values]);
      continue;
    }
    removed = true;
    // fromEntries defines keys as own properties: a `__proto__` a client sent stays a key.
    if (rest.length > 0) kept.push([provider, Object.fromEntries(rest)]);
  }
  if (!removed) return holder;
  const { providerOptions: _removed, ...others } = holder;
  return (
    kept.length === 0 ? others : { ...others, providerOptions: Object.fromEntries(kept) }
  ) as T;
}

/** A content part without cache options, nor in the parts of a tool result's `content` output. */
function partWithoutCacheOptions<T extends WithOptions>(part: T): T {
  const stripped = withoutCacheOptions(part);
  const output = (stripped as { output?: { type?: unknown; value?: unknown } }).output;
  if (output?.type !== 'content' || !Array.isArray(output.value)) return stripped;
  const value = (output.value as WithOptions[]).map((item) =>
    typeof item === 'object' && item !== null ? withoutCacheOptions(item) : item,
  );
  if (value.every((item, index) => item === (output.value as unknown[])[index])) return stripped;
  return { ...stripped, output: { ...output, value } };
}

/**
 * The model messages without any cache mark (on a message or on any of its parts): what a chat
 * client put on its messages (a part's `providerMetadata`, which the AI SDK's conversion turns
 * into `providerOptions`, or a tool part's `callProviderMetadata`) is the client's, and the plan
 * owns cache marks (providers take 4 a request, and a mark moves what the provider caches and
 * bills). Every other provider option (a reasoning signature, an OpenAI item id) is kept as is.
 */
export function withoutCacheMarks(messages: readonly ModelMessage[]): ModelMessage[] {
  return messages.map((message) => {
    const stripped = withoutCacheOptions(message);
    if (!Array.isArray(stripped.content)) return stripped;
    const content = (stripped.content as WithOptions[]).map((part) =>
      typeof part === 'object' && part !== null ? partWithoutCacheOptions(part) : part,
    );
    if (content.every((part, index) => part === (stripped.content as unknown[])[index]))
      return stripped;
    return { ...stripped, content } as ModelMessage;
  });
}

/** `toModelMessages` without any cache mark the messages carried ({@link withoutCacheMarks}). */
export async function toUnmarkedModelMessages(
  messages: readonly UIMessage[],
): Promise<ModelMessage[]> {
  return withoutCacheMarks(await toModelMessages(messages.slice()));
}

/**
 * The budgeted conversation as model messages, with the planned breakpoints marked by the cache
 * profile: the system message, and the last model message made from each marked UI message (one
 * UI message can become an assistant message and a tool message; the mark goes on the last, so
 * the cached prefix holds the tool result too). Only the plan's marks: any the messages carried
 * are removed first ({@link withoutCacheMarks}). Without a profile (`null`) the output is the
 * messages without marks.
 */
export async function toMarkedModelMessages(
  systemPrompt: string,
  messages: readonly UIMessage[],
  breakpoints: readonly CacheBreakpoint[],
  context: MarkContext | null,
): Promise<CacheMarkOutput> {
  const system: SystemModelMessage = { role: 'system', content: systemPrompt };
  if (context === null) {
    return {
      system,
      messages: await toUnmarkedModelMessages(messages),
      providerOptions: undefined,
    };
  }
  const marked = new Set<string>();
  for (const breakpoint of breakpoints) {
    if (breakpoint.kind === 'message') marked.add(breakpoint.id);
  }
  const output: ModelMessage[] = [];
  const markMessages: number[] = [];
  let sliceStart = 0;
  for (let index = 0; index < messages.length; index += 1) {
    const id = (messages[index] as UIMessage).id;
    if (!marked.has(id) && index < messages.length - 1) continue;
    const converted = await toUnmarkedModelMessages(messages.slice(sliceStart, index + 1));
    output.push(...converted);
    if (marked.has(id) && converted.length > 0) markMessages.push(output.length - 1);
    sliceStart = index + 1;
  }
  return context.profile.mark({
    model: context.model,
    chatId: context.chatId,
    branch: context.branch,
    system,
    messages: output,
    markSystem: breakpoints.some((breakpoint) => breakpoint.kind === 'system'),
    markMessages,
  });
}
