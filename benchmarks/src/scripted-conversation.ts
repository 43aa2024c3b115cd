// The scripted conversation the budget and cache benchmarks replay: deterministic text, a tool
// call in every fifth reply, so every run sends the same bytes.
import type { UIMessage } from 'ai';

/** A small deterministic generator (mulberry32), so every run sends the same text. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const vocabulary =
  'order invoice customer refund shipping delay warehouse account address payment status ticket product return policy discount inventory carrier tracking label region'.split(
    ' ',
  );

function sentence(next: () => number, words: number): string {
  const out: string[] = [];
  for (let index = 0; index < words; index += 1) {
    out.push(vocabulary[Math.floor(next() * vocabulary.length)] ?? 'word');
  }
  return `${out.join(' ')}.`;
}

/** Turn `turn`'s user message and assistant reply (every fifth reply calls a tool). */
export function scriptedTurn(
  turn: number,
  next: () => number,
): { question: UIMessage; reply: UIMessage } {
  const question: UIMessage = {
    id: `q${turn}`,
    role: 'user',
    parts: [
      { type: 'text', text: `Turn ${turn}: ${sentence(next, 20 + Math.floor(next() * 60))}` },
    ],
  };
  const parts: UIMessage['parts'] = [];
  if (turn % 5 === 0) {
    parts.push({
      type: 'tool-lookupOrder',
      toolCallId: `call-${turn}`,
      state: 'output-available',
      input: { orderId: `A-${1000 + turn}` },
      output: { status: sentence(next, 12), items: Math.floor(next() * 9) + 1 },
    } as UIMessage['parts'][number]);
  }
  parts.push({ type: 'text', text: sentence(next, 40 + Math.floor(next() * 100)) });
  return { question, reply: { id: `a${turn}`, role: 'assistant', parts } };
}
