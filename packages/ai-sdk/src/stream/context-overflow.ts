// A provider's "the input is too long for this model" error, recognised in the shapes the providers
// return through the AI SDK: an `APICallError` (statusCode, responseBody, data), a provider's
// stream error object, or the raw error frame, possibly wrapped (`cause`, a `RetryError`'s
// `lastError`). Nothing here trusts the error's shape: every field is read as unknown.

/** A provider's context-length error, as {@link contextOverflowOf} reads it. */
export interface ContextOverflow {
  /** The input tokens the provider allows (its own count), when the error says. */
  readonly limit: number | undefined;
  /** The input tokens the provider counted for the refused call, when the error says. */
  readonly sent: number | undefined;
  /** The provider's message. */
  readonly message: string;
}

/** Status codes a context-length error comes with (none: a stream's error frame). */
const OVERFLOW_STATUS = new Set([400, 413, 422]);

/**
 * The messages of context-length errors: OpenAI (and Azure OpenAI), Anthropic, Google (Gemini,
 * Vertex), Bedrock (Converse and the models behind it).
 */
const OVERFLOW_MESSAGES: readonly RegExp[] = [
  // OpenAI: "This model's maximum context length is 128000 tokens. However, your messages
  // resulted in 130000 tokens. Please reduce the length of the messages."
  /maximum context length is \d+ tokens/i,
  // OpenAI Responses: "Your input exceeds the context window of this model."
  /exceeds the context window/i,
  // Anthropic, and Claude on Bedrock: "prompt is too long: 210000 tokens > 200000 maximum".
  /prompt is too long/i,
  // Anthropic: "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000".
  /input length and `?max_tokens`? exceed context limit/i,
  // Google: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)."
  /input token count.{0,24}exceeds the maximum number of tokens/i,
  // Bedrock: "Input is too long for requested model." / "... too many input tokens ..."
  /input is too long for (the )?requested model/i,
  /too many input tokens/i,
];

/** The error codes of context-length errors (OpenAI's `code`). */
const OVERFLOW_CODES = new Set(['context_length_exceeded']);

/** How deep the wrappers of an error are followed (`cause`, `lastError`, `errors`). */
const MAX_DEPTH = 4;
/** How much of a message or a response body is read. */
const MAX_TEXT = 8_000;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function textOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value.slice(0, MAX_TEXT) : undefined;
}

/** A count read from a message: a positive safe integer, else undefined. */
function tokenCount(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** The limit and the count a provider's message names, input tokens only. */
function figuresOf(message: string): Pick<ContextOverflow, 'limit' | 'sent'> {
  // Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"
  let match = /prompt is too long: (\d+) tokens > (\d+) maximum/i.exec(message);
  if (match !== null) return { sent: tokenCount(match[1]), limit: tokenCount(match[2]) };
  // Anthropic: "exceed context limit: 198000 + 8192 > 200000" (input + max_tokens > window)
  match = /exceed context limit: (\d+) \+ (\d+) > (\d+)/i.exec(message);
  if (match !== null) {
    const window = tokenCount(match[3]);
    const output = tokenCount(match[2]) ?? 0;
    return {
      sent: tokenCount(match[1]),
      limit: window === undefined || window <= output ? undefined : window - output,
    };
  }
  // Google: "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576)."
  match =
    /input token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)/i.exec(
      message,
    );
  if (match !== null) return { sent: tokenCount(match[1]), limit: tokenCount(match[2]) };
  match = /maximum number of tokens allowed \((\d+)\)/i.exec(message);
  if (match !== null) return { sent: undefined, limit: tokenCount(match[1]) };
  // OpenAI: "maximum context length is 128000 tokens. However, you requested 130000 tokens
  // (126000 in the messages, 4000 in the completion)" or "your messages resulted in 130000 tokens".
  match = /maximum context length is (\d+) tokens/i.exec(message);
  if (match !== null) {
    const window = tokenCount(match[1]);
    const parts = /\((\d+) in the messages, (\d+) in the completion\)/i.exec(message);
    if (parts !== null) {
      const output = tokenCount(parts[2]) ?? 0;
      return {
        sent: tokenCount(parts[1]),
        limit: window === undefined || window <= output ? undefined : window - output,
      };
    }
    const total = /(?:resulted in|requested) (\d+) tokens/i.exec(message);
    return { sent: tokenCount(total?.[1]), limit: window };
  }
  return { sent: undefined, limit: undefined };
}

/** The messages and codes an error object carries, its provider's error body included. */
function signalsOf(error: Record<string, unknown>): { messages: string[]; codes: string[] } {
  const messages: string[] = [];
  const codes: string[] = [];
  const take = (value: unknown): void => {
    if (!isObject(value)) return;
    const message = textOf(value.message);
    if (message !== undefined) messages.push(message);
    for (const key of ['code', 'type', 'status']) {
      const code = value[key];
      if (typeof code === 'string') codes.push(code.slice(0, 100));
    }
  };
  take(error);
  // The provider's parsed body (`APICallError.data`, a stream error's `data`, a frame's `error`).
  for (const body of [error.data, error.error]) {
    take(body);
    if (isObject(body)) {
      take(body.error);
      if (isObject(body.response)) take(body.response.error);
    }
  }
  // The raw body, when the provider's schema did not parse it.
  const raw = textOf(error.responseBody);
  if (raw !== undefined && messages.every((message) => !raw.includes(message))) messages.push(raw);
  return { messages, codes };
}

/** The errors an error wraps: its cause, a RetryError's last error, an aggregate's errors. */
function wrapped(error: Record<string, unknown>): unknown[] {
  const inner: unknown[] = [error.cause, error.lastError];
  if (Array.isArray(error.errors)) inner.push(...error.errors.slice(-3));
  return inner.filter(isObject);
}

function overflowIn(
  error: unknown,
  depth: number,
  seen: Set<unknown>,
): ContextOverflow | undefined {
  if (!isObject(error) || depth > MAX_DEPTH || seen.has(error)) return undefined;
  seen.add(error);
  const status = error.statusCode;
  const statusFits =
    status === undefined || status === null || OVERFLOW_STATUS.has(status as number);
  if (statusFits) {
    const { messages, codes } = signalsOf(error);
    const coded = codes.some((code) => OVERFLOW_CODES.has(code));
    const said = messages.find((message) =>
      OVERFLOW_MESSAGES.some((pattern) => pattern.test(message)),
    );
    if (coded || said !== undefined) {
      const message = said ?? messages[0] ?? 'context length exceeded';
      return { ...figuresOf(message), message };
    }
  }
  for (const inner of wrapped(error)) {
    const found = overflowIn(inner, depth + 1, seen);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * The context-length error a model call failed with, or undefined for any other error: OpenAI's
 * `context_length_exceeded` ("This model's maximum context length is N tokens…"), Anthropic's
 * 400 `invalid_request_error` ("prompt is too long: N tokens > M maximum"), Google's 400
 * `INVALID_ARGUMENT` ("The input token count (N) exceeds the maximum number of tokens allowed
 * (M)") and Bedrock's `ValidationException` ("Input is too long for requested model", "too many
 * input tokens"), as an `APICallError`, a provider's stream error or its raw frame, also when
 * wrapped (`cause`, a `RetryError`'s `lastError`). `limit` and `sent` are the input tokens the
 * provider allows and counted, when its message says (OpenAI's completion share taken off).
 *
 * @example
 * ```ts
 * const overflow = contextOverflowOf(error);
 * if (overflow?.limit !== undefined) console.log(`the model takes ${overflow.limit} input tokens`);
 * ```
 */
export function contextOverflowOf(error: unknown): ContextOverflow | undefined {
  return overflowIn(error, 0, new Set());
}

/**
 * The budget (in the engine's count) of the call retried after an overflow: the provider's limit
 * turned into the engine's count by what the provider counted against what the engine counted
 * (`counted`, the refused call's input), else the limit as given, else three quarters of what was
 * sent; then a tenth off for the counters' drift. Always below what was sent and within the
 * turn's budget, so the retry sends less than the call that was refused.
 */
export function retryBudget(
  counted: number,
  overflow: Pick<ContextOverflow, 'limit' | 'sent'>,
  previous: number | undefined,
): number {
  const { limit, sent } = overflow;
  const target =
    limit !== undefined && sent !== undefined && sent > limit
      ? (counted * limit) / sent
      : (limit ?? counted * 0.75);
  const budget = Math.floor(Math.min(target, counted, previous ?? Number.POSITIVE_INFINITY) * 0.9);
  return Math.max(1, budget);
}
