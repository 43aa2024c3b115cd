import { ValidationError } from '@ctxgraph/fragments-core';
import { generateText, isToolUIPart, type LanguageModel, type UIMessage } from 'ai';
import type { SummarizeContext, Summarizer } from './summarizer';

/** Options of {@link summarizer}. */
export interface SummarizerOptions {
  /** The model that writes the summary (any AI SDK language model, or a gateway model id). */
  readonly model: LanguageModel;
  /**
   * The system instruction for a compaction summary.
   * @default DEFAULT_COMPACTION_INSTRUCTION
   */
  readonly instruction?: string;
  /**
   * The system instruction for a branch summary (`switchBranch(name, { carry })`).
   * @default DEFAULT_BRANCH_SUMMARY_INSTRUCTION
   */
  readonly branchInstruction?: string;
  /** The most tokens the summary may take. @default the model's own limit */
  readonly maxOutputTokens?: number;
}

/** The instruction the built-in summarizer gives the model when compacting. */
export const DEFAULT_COMPACTION_INSTRUCTION: string = [
  'You compress the earlier part of a conversation between a user and an AI assistant into a summary that replaces it: the assistant will continue the conversation from your summary and the messages after it, without seeing the original messages again.',
  'Keep everything the assistant needs to continue: the user’s goals, requests and preferences; decisions made and why; facts, names, numbers, identifiers, file paths and code that were established; what tools were called and what they returned, when it still matters; open questions and unfinished tasks.',
  'Leave out greetings, small talk, repetition and anything superseded later. If the conversation starts with an earlier summary, fold it in.',
  'Write plain, dense prose or short bullet points in the language of the conversation, in the third person ("The user asked…"). Reply with the summary only.',
].join('\n\n');

/** The instruction the built-in summarizer gives the model when carrying a branch's conclusion. */
export const DEFAULT_BRANCH_SUMMARY_INSTRUCTION: string = [
  'You summarize a side exploration of a conversation between a user and an AI assistant, so its conclusion can be carried back to the main line of the conversation without its transcript.',
  'State what was explored, what was found or decided, and any result, fact, identifier or code worth keeping. Leave out dead ends unless knowing they failed matters.',
  'Be brief and concrete, in the language of the conversation. Reply with the summary only.',
].join('\n\n');

/**
 * The built-in summarizer for `compact()` and `switchBranch(name, { carry })`: one
 * `generateText` call with the model you pass, a default instruction per purpose, and the
 * messages as a transcript.
 *
 * @example
 * ```ts
 * import { openai } from '@ai-sdk/openai';
 * await engine.compact({ summarize: summarizer({ model: openai('gpt-5-mini') }), keep: 4 });
 * ```
 */
export function summarizer(options: SummarizerOptions): Summarizer {
  if (typeof options !== 'object' || options === null || options.model === undefined) {
    throw new ValidationError('summarizer(options): options.model is required (an AI SDK model).', {
      issues: [{ path: 'model', message: 'expected a language model' }],
    });
  }
  for (const key of ['instruction', 'branchInstruction'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value.trim() === '')) {
      throw new ValidationError(`summarizer(options): ${key} must be a non-empty string.`, {
        issues: [{ path: key, message: 'expected a non-empty string' }],
      });
    }
  }
  const maxOutputTokens = options.maxOutputTokens;
  if (
    maxOutputTokens !== undefined &&
    (!Number.isInteger(maxOutputTokens) || maxOutputTokens < 1)
  ) {
    throw new ValidationError('summarizer(options): maxOutputTokens must be a positive integer.', {
      issues: [{ path: 'maxOutputTokens', message: 'expected a positive integer' }],
    });
  }
  return async (messages: readonly UIMessage[], context: SummarizeContext): Promise<string> => {
    const system =
      context.purpose === 'branch-summary'
        ? (options.branchInstruction ?? DEFAULT_BRANCH_SUMMARY_INSTRUCTION)
        : (options.instruction ?? DEFAULT_COMPACTION_INSTRUCTION);
    const result = await generateText({
      model: options.model,
      system,
      prompt: `<conversation>\n${transcript(messages)}\n</conversation>`,
      ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
    });
    return result.text;
  };
}

/** The messages as a plain transcript: one block per message, tool calls with their results. */
function transcript(messages: readonly UIMessage[]): string {
  return messages
    .map((message) => {
      const lines: string[] = [];
      for (const part of message.parts) {
        if (part.type === 'text') lines.push(part.text);
        else if (isToolUIPart(part)) {
          const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice(5);
          const output =
            part.state === 'output-available'
              ? ` → ${JSON.stringify(part.output)}`
              : part.state === 'output-error'
                ? ` → error: ${part.errorText}`
                : '';
          lines.push(`[tool ${name}(${JSON.stringify(part.input ?? null)})${output}]`);
        } else if (part.type === 'file') {
          lines.push(`[file ${part.filename ?? part.mediaType}]`);
        }
      }
      return `[${message.role}]\n${lines.join('\n')}`;
    })
    .join('\n\n');
}
