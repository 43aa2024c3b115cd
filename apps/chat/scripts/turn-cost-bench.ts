// Drives N turns through the reference app in this process (real port, real SQLite file, the
// mock model with no delay) and prints ctxgraph's server-side time per turn (reading and placing
// the request, resolving the model input, saving the reply) against the whole request as the
// client sees it. Prints figures; asserts nothing.
//
//   pnpm --filter @ctxgraph/chat-app bench            (TURNS=200 by default)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMockModel } from '../src/server/mock-model';
import { startChatServer } from '../src/server/start-server';

const turns = Number(process.env.TURNS ?? 200);
const warmup = 10;
const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-chat-bench-'));
const timings: { begin: number[]; save: number[] } = { begin: [], save: [] };
let saved: (() => void) | undefined;
const server = await startChatServer({
  sqlitePath: join(directory, 'bench.db'),
  model: createMockModel({ chunkDelayMs: 0 }),
  port: 0,
  onTiming: (entry) => {
    timings[entry.phase].push(entry.ms);
    if (entry.phase === 'save') saved?.();
  },
});

interface StoredMessage {
  id: string;
  role: string;
  parts: unknown[];
}

const messages: StoredMessage[] = [];
const whole: number[] = [];
for (let index = 0; index < turns + warmup; index += 1) {
  messages.push({
    id: `u${index}`,
    role: 'user',
    parts: [{ type: 'text', text: `question number ${index}` }],
  });
  const done = new Promise<void>((resolve) => {
    saved = resolve;
  });
  const started = performance.now();
  const response = await fetch(`${server.url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id: 'bench-chat', trigger: 'submit-message', messages }),
  });
  await response.text();
  await done;
  whole.push(performance.now() - started);
  const path = (await (await fetch(`${server.url}/api/chat/bench-chat/messages`)).json()) as {
    messages: StoredMessage[];
  };
  messages.splice(0, messages.length, ...path.messages);
}

const median = (values: number[]): number => {
  const sorted = values.slice(warmup).sort((left, right) => left - right);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const ctxgraph = timings.begin.map((begin, index) => begin + (timings.save[index] ?? 0));
console.log(`chat app, ${turns} turns (after ${warmup} warm-up), mock model without delay, SQLite`);
console.log(`  ctxgraph server-side per turn (median): ${median(ctxgraph).toFixed(2)} ms`);
console.log(`    read + place + resolve (begin):      ${median(timings.begin).toFixed(2)} ms`);
console.log(`    save the reply:                      ${median(timings.save).toFixed(2)} ms`);
console.log(`  whole request, client side (median):  ${median(whole).toFixed(2)} ms`);
console.log(`  history at the end: ${messages.length} messages`);
await server.close();
rmSync(directory, { recursive: true, force: true });
