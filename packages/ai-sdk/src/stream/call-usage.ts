import type { CachePrediction, OverflowRetry } from '@ctxgraph/engine';

/** What the usage of a reply is recorded as. */
export interface ReplyUsage {
  readonly usage: {
    readonly inputTokens?: number | undefined;
    readonly outputTokens?: number | undefined;
    readonly inputTokenDetails?: {
      readonly cacheReadTokens?: number | undefined;
      readonly cacheWriteTokens?: number | undefined;
    };
    readonly cachedInputTokens?: number | undefined;
  };
  readonly modelId: string;
  /**
   * The call's finished steps (one provider call each), when any finished: the engine records
   * their sum and reconciles the cache prediction step by step (`withUsage(…, { steps })`).
   */
  readonly steps?: readonly {
    readonly usage: ReplyUsage['usage'];
    readonly providerMetadata?: unknown;
  }[];
  /** The budgeted resolve's cache prediction (`result.budget.cache`), reconciled on save. */
  readonly cache?: CachePrediction;
  /** The call was retried once after the provider refused the first as too long. */
  readonly overflowRetry?: OverflowRetry;
}

type Usage = ReplyUsage['usage'];

/** Adds two counts the way usage totals do: unknown only when both are. */
function add(left: number | undefined, right: number | undefined): number | undefined {
  if (left === undefined) return right;
  if (right === undefined) return left;
  return left + right;
}

/** The sum of the usage of several steps of one call. */
export function sumUsage(steps: readonly Usage[]): Usage {
  let total: {
    inputTokens?: number | undefined;
    outputTokens?: number | undefined;
    cacheReadTokens?: number | undefined;
    cacheWriteTokens?: number | undefined;
  } = {};
  for (const step of steps) {
    total = {
      inputTokens: add(total.inputTokens, step.inputTokens),
      outputTokens: add(total.outputTokens, step.outputTokens),
      cacheReadTokens: add(
        total.cacheReadTokens,
        step.inputTokenDetails?.cacheReadTokens ?? step.cachedInputTokens,
      ),
      cacheWriteTokens: add(total.cacheWriteTokens, step.inputTokenDetails?.cacheWriteTokens),
    };
  }
  return {
    inputTokens: total.inputTokens,
    outputTokens: total.outputTokens,
    inputTokenDetails: {
      cacheReadTokens: total.cacheReadTokens,
      cacheWriteTokens: total.cacheWriteTokens,
    },
  };
}

/** The parts of `streamText`'s full stream the cycle reads usage from (both AI SDK majors). */
export interface UsagePart {
  readonly type: string;
  readonly usage?: Usage;
  readonly providerMetadata?: unknown;
  readonly totalUsage?: Usage;
  readonly response?: { readonly modelId?: string };
}

/**
 * Collects a call's usage from its full stream: each finished step's usage, and the call's
 * `totalUsage` when the stream reports it (it is in both majors' `finish` part). A stopped call
 * has the steps that finished.
 */
export class CallUsage {
  readonly #steps: { usage: Usage; providerMetadata?: unknown }[] = [];
  #total: Usage | undefined;
  #modelId: string | undefined;

  observe(part: UsagePart): void {
    if (part.type === 'finish-step') {
      if (part.usage)
        this.#steps.push(
          part.providerMetadata === undefined
            ? { usage: part.usage }
            : { usage: part.usage, providerMetadata: part.providerMetadata },
        );
      if (part.response?.modelId) this.#modelId = part.response.modelId;
    } else if (part.type === 'finish') {
      this.#total = part.totalUsage;
    }
  }

  /** The call's usage: its reported total, else the sum of its finished steps. */
  usage(): Usage {
    return this.#total ?? sumUsage(this.#steps.map((step) => step.usage));
  }

  /**
   * The finished steps, each a provider call with its own usage and provider metadata (the
   * engine records their sum and reconciles the cache prediction step by step); undefined when
   * none finished.
   */
  steps(): readonly { usage: Usage; providerMetadata?: unknown }[] | undefined {
    return this.#steps.length === 0 ? undefined : this.#steps.slice();
  }

  /** The model id the provider answered with, when a step reported it. */
  get modelId(): string | undefined {
    return this.#modelId;
  }
}
