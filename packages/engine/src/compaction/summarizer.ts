import { EngineError, stringProblem, ValidationError } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';

/** Why a summary is asked for. */
export interface SummarizeContext {
  /**
   * `'compaction'`: the span will be replaced by the summary on this branch (`compact()`).
   * `'branch-summary'`: the summary carries a branch's conclusion to another branch
   * (`switchBranch(name, { carry })`).
   */
  readonly purpose: 'compaction' | 'branch-summary';
}

/**
 * Turns messages into a summary: any async function from the span's messages (oldest first, as
 * they were sent; after an earlier compaction the first one is its summary) to text. A throw or
 * an empty text means no summary: nothing is written.
 */
export type Summarizer = (
  messages: readonly UIMessage[],
  context: SummarizeContext,
) => string | Promise<string>;

/**
 * Runs a summarizer and returns its text, or throws an `EngineError` that says nothing was written
 * (the summarizer threw, returned no text, or text a store cannot keep).
 */
export async function runSummarizer(
  summarize: Summarizer,
  messages: readonly UIMessage[],
  context: SummarizeContext,
  method: string,
): Promise<string> {
  let summary: unknown;
  try {
    summary = await summarize(messages, context);
  } catch (error) {
    throw new EngineError(
      `${method}: the summarizer failed (${error instanceof Error ? error.message : String(error)}). Nothing was written.`,
      { cause: error },
    );
  }
  if (typeof summary !== 'string') {
    throw new EngineError(
      `${method}: the summarizer returned ${summary === null ? 'null' : typeof summary}, not text. Nothing was written.`,
    );
  }
  if (summary.trim() === '') {
    throw new EngineError(
      `${method}: the summarizer returned an empty summary. Nothing was written.`,
    );
  }
  // Models do emit NUL or half an emoji; a store refuses them, so refuse them here, typed.
  const problem = stringProblem(summary);
  if (problem !== undefined) {
    throw new EngineError(
      `${method}: the summary cannot be stored (${problem}). Nothing was written.`,
      {
        cause: new ValidationError(`${method}: summary: ${problem}.`, {
          issues: [{ path: 'summary', message: problem }],
        }),
      },
    );
  }
  return summary.trim();
}
