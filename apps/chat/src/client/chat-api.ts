import type { ContextGauge } from '@ctxgraph/ai-sdk';
import type { ChatUIMessage } from '../server/tools';
import type { ContextGaugeProps } from './components/context-gauge';

export type { ReplyOutcome } from '@ctxgraph/client';

/** What `GET /api/chat/:id/context` answers (`cycle.contextGauge` of @ctxgraph/ai-sdk). */
export type ContextGaugeAnswer = ContextGauge;

/**
 * The header gauge's figures from the server's answer: the tokens the next call sends, of the
 * budget's window when one is set, and what the chat cost so far when its model has a price.
 */
export function gaugeOf(answer: ContextGaugeAnswer): ContextGaugeProps {
  return {
    usedTokens: answer.tokens,
    windowTokens: answer.maxInputTokens ?? undefined,
    costUsd: answer.usage.cost ?? undefined,
  };
}

/**
 * What the page sends for every message the user writes, a new one or an edited version: the
 * text and its metadata (when it was sent). One place, so an edit is stored as a new message is.
 */
export function written(text: string): { text: string; metadata: { sentAt: number } } {
  return { text, metadata: { sentAt: Date.now() } };
}

/** The text of a message's text parts, joined (what a user message shows, and an edit starts from). */
export function textOfParts(message: ChatUIMessage): string {
  return message.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
