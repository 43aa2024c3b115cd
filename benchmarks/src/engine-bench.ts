// Engine costs over store-memory as history grows. Prints figures; asserts nothing.
//   cd benchmarks && node --import tsx src/engine-bench.ts
import { assistantText, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { type ContextStore, hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { median, printTable, seedChat } from './bench-helpers.ts';

const sizes = [100, 1_000, 10_000];
const renderer = new XmlRenderer();

async function measure(store: ContextStore, size: number): Promise<Record<string, string>> {
  const chatId = `bench-${size}`;
  await seedChat(store, chatId, 'bench-user', size);
  const engine = new ContextEngine({ store, chatId, userId: 'bench-user', renderer });
  engine.set(role('You are a benchmark.'), hint('Be quick.'));

  const coldTimes: number[] = [];
  for (let run = 0; run < 5; run += 1) {
    const cold = new ContextEngine({ store, chatId, userId: 'bench-user', renderer });
    const started = performance.now();
    const { messages } = await cold.resolve();
    coldTimes.push(performance.now() - started);
    if (messages.length < size)
      throw new Error(`cold resolve returned ${messages.length} of ${size} messages`);
  }

  await engine.resolve();
  const warmTimes: number[] = [];
  for (let run = 0; run < 50; run += 1) {
    const started = performance.now();
    await engine.resolve();
    warmTimes.push(performance.now() - started);
  }

  const saveTimes: number[] = [];
  for (let run = 0; run < 50; run += 1) {
    engine.set(user(`question ${run}`), assistantText(`answer ${run}`));
    const started = performance.now();
    await engine.save();
    saveTimes.push(performance.now() - started);
  }

  const warmAfterSave: number[] = [];
  for (let run = 0; run < 20; run += 1) {
    engine.set(user(`more ${run}`));
    await engine.save();
    const started = performance.now();
    await engine.resolve();
    warmAfterSave.push(performance.now() - started);
  }

  const head = engine.headMessageId as string;
  const time = async (task: () => Promise<unknown>, runs = 20): Promise<number> => {
    const times: number[] = [];
    for (let run = 0; run < runs; run += 1) {
      const started = performance.now();
      await task();
      times.push(performance.now() - started);
    }
    return median(times);
  };
  const checkpointMs = await time(() => engine.checkpoint('bench', { replace: true }));
  const rewindMs = await time(() => engine.rewind(head));
  const restoreMs = await time(() => engine.restore('bench'));
  const btwMs = await time(() => engine.btw());

  return {
    history: String(size),
    'save (1 turn)': median(saveTimes).toFixed(3),
    'cold resolve': median(coldTimes).toFixed(2),
    'warm resolve': median(warmTimes).toFixed(3),
    'warm resolve after save': median(warmAfterSave).toFixed(3),
    rewind: rewindMs.toFixed(3),
    checkpoint: checkpointMs.toFixed(3),
    restore: restoreMs.toFixed(3),
    btw: btwMs.toFixed(3),
  };
}

const rows: Record<string, string>[] = [];
for (const size of sizes) rows.push(await measure(new InMemoryContextStore(), size));
console.log('ContextEngine over InMemoryContextStore: median milliseconds per operation');
printTable(rows);
const first = rows[0];
const last = rows.at(-1);
if (first && last) {
  const ratio = (key: string) => (Number(last[key]) / Number(first[key])).toFixed(2);
  console.log(
    `\n10,000 vs 100 messages: save ${ratio('save (1 turn)')}x, warm resolve ${ratio('warm resolve')}x, warm resolve after save ${ratio('warm resolve after save')}x (target: within 2x)`,
  );
}
