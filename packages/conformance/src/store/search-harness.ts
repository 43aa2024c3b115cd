import type { ContextStore, SearchHit } from '@ctxgraph/fragments-core';
import { expect } from 'vitest';
import { searchIn, textMessage, uniqueId } from './store-harness';

// Helpers of the search suite: writing messages to find, the contract's rule and score written
// out independently of the kit, and reading a search to its last page.

/** Commits one message per text on top of the branch head; returns their ids. */
export async function say(
  store: ContextStore,
  chatId: string,
  texts: readonly string[],
  branch: string = 'main',
): Promise<string[]> {
  const head = await store.getHead({ chatId, branch });
  const ids = texts.map(() => uniqueId('s'));
  await store.commit({
    chatId,
    branch,
    expectedHeadId: head.headMessageId,
    messages: texts.map((text, index) => ({
      id: ids[index] as string,
      message: textMessage(ids[index] as string, text, index % 2 === 0 ? 'user' : 'assistant'),
    })),
  });
  return ids;
}

/**
 * The contract's search rule and score, written out here from `SearchMessagesInput.query` and
 * `SearchHit.score` (not imported from the store harness), so the kit is checked too.
 */
function contractWords(text: string): string[] {
  const fold = (value: string): string => value.normalize('NFKD').replace(/\p{M}+/gu, '');
  return fold(fold(text).toLowerCase()).match(/[\p{L}\p{N}]+/gu) ?? [];
}

export function contractScore(hit: SearchHit, query: string): number {
  const texts: string[] = [];
  for (const part of hit.message.parts as { type?: unknown; text?: unknown }[])
    if ((part.type === 'text' || part.type === 'reasoning') && typeof part.text === 'string')
      texts.push(part.text);
  const words = contractWords(texts.join('\n'));
  const terms = [
    ...new Set(
      (
        query
          .normalize('NFKD')
          .replace(/\p{M}+/gu, '')
          .match(/[\p{L}\p{N}]+/gu) ?? []
      )
        .filter((word) => !['AND', 'OR', 'NOT', 'NEAR'].includes(word))
        .flatMap(contractWords),
    ),
  ];
  let score = 0;
  for (const term of terms) {
    const f = words.filter((word) => word === term).length;
    score += (f * 2.2) / (f + 0.3 + 0.028125 * words.length);
  }
  return score;
}

/** The node ids of the hits, in order. */
export function hitIds(hits: readonly SearchHit[]): string[] {
  return hits.map((hit) => hit.messageId);
}

/** Every hit of a search, page by page, and how many pages it took. */
export async function searchAll(
  store: ContextStore,
  input: {
    userId: string;
    query: string;
    chatId?: string;
    branch?: string;
    limit?: number;
    cursor?: string;
  },
): Promise<{ hits: SearchHit[]; pages: number }> {
  const hits: SearchHit[] = [];
  let cursor: string | undefined = input.cursor;
  let pages = 0;
  do {
    const page = await searchIn(store, { ...input, ...(cursor === undefined ? {} : { cursor }) });
    hits.push(...page.items);
    pages += 1;
    cursor = page.nextCursor ?? undefined;
    if (pages > 1_000) expect.fail('searchMessages kept returning a cursor');
  } while (cursor !== undefined);
  return { hits, pages };
}
