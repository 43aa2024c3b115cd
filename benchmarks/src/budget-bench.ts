// The budget and cache plan on a scripted 200-turn conversation (deterministic text, tool calls
// included) with maxInputTokens 8000: per call, how many leading input tokens equal the previous
// call's, for ctxgraph's plan and for the naive "drop the oldest message until it fits"; then the
// cost of the budget on warm resolves of 1,000- and 10,000-message chats. Prints figures only.
import { message, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { guardrail, hint, role } from '@ctxgraph/fragments-core';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { o200kTokenizer } from '@ctxgraph/tokenizer-o200k';
import type { UIMessage } from 'ai';
import { median, printTable, seedChat } from './bench-helpers';
import { random, scriptedTurn } from './scripted-conversation';

const maxInputTokens = 8000;
const turns = 200;
const renderer = new XmlRenderer();

/** The text a message contributes, counted the way the engine counts (text + 4 per message). */
function messageTokens(entry: UIMessage): number {
  const text = entry.parts
    .map((part) => (part.type === 'text' ? part.text : JSON.stringify(part)))
    .join('\n');
  return o200kTokenizer.count(text) + 4;
}

/** Input as a list of [bytes, tokens] elements: the system prompt, then each message. */
type Input = Array<{ bytes: string; tokens: number }>;

function leadingEqualTokens(previous: Input | null, current: Input): number {
  if (previous === null) return 0;
  let tokens = 0;
  for (let index = 0; index < current.length && index < previous.length; index += 1) {
    if (current[index]?.bytes !== previous[index]?.bytes) break;
    tokens += current[index]?.tokens ?? 0;
  }
  return tokens;
}

const total = (input: Input): number => input.reduce((sum, element) => sum + element.tokens, 0);

/**
 * Plays the conversation. `freshEngine`: a new engine per call on the same store (a server that
 * keeps nothing between requests), so the plan cannot lean on the previous call's.
 */
async function conversation(freshEngine: boolean): Promise<void> {
  const next = random(14);
  const store = new InMemoryContextStore();
  const open = (): ContextEngine =>
    new ContextEngine({
      store,
      chatId: 'budget-bench',
      userId: 'bench',
      renderer,
      tokenizer: o200kTokenizer,
    }).set(
      role('You are the support assistant of an online shop.'),
      guardrail({ rule: 'Never promise a refund before the order is checked.' }),
      hint('Orders ship from three warehouses; tracking numbers start with the carrier code.'),
    );
  let engine = open();
  const all: UIMessage[] = [];
  let ours: Input | null = null;
  let naive: Input | null = null;
  const rows: Record<string, string>[] = [];
  const sums = { oursReused: 0, oursTotal: 0, naiveReused: 0, naiveTotal: 0, overBudget: 0 };
  const engineReport = { reused: 0, total: 0 };
  let maxTotal = 0;
  for (let turn = 0; turn < turns; turn += 1) {
    const { question, reply } = scriptedTurn(turn, next);
    if (freshEngine) engine = open();
    engine.set(message(question));
    const result = await engine.resolve({ budget: { maxInputTokens } });
    const system = {
      bytes: result.systemPrompt,
      tokens: o200kTokenizer.count(result.systemPrompt),
    };
    const input: Input = [
      system,
      ...result.messages.map((entry) => ({
        bytes: JSON.stringify(entry),
        tokens: messageTokens(entry),
      })),
    ];
    all.push(question);
    // Naive: everything, then the oldest message out until it fits.
    const naiveInput: Input = [
      system,
      ...all.map((entry) => ({ bytes: JSON.stringify(entry), tokens: messageTokens(entry) })),
    ];
    while (total(naiveInput) > maxInputTokens && naiveInput.length > 2) naiveInput.splice(1, 1);

    const oursReused = leadingEqualTokens(ours, input);
    const naiveReused = leadingEqualTokens(naive, naiveInput);
    const reportTotal = result.budget?.totalTokens ?? 0;
    maxTotal = Math.max(maxTotal, reportTotal);
    if (reportTotal > maxInputTokens) sums.overBudget += 1;
    if (turn > 0) {
      sums.oursReused += oursReused;
      sums.oursTotal += total(input);
      sums.naiveReused += naiveReused;
      sums.naiveTotal += total(naiveInput);
      engineReport.reused += result.budget?.prefix.reusedTokens ?? 0;
      engineReport.total += reportTotal;
    }
    if (turn % 20 === 0 || turn === turns - 1) {
      rows.push({
        turn: String(turn),
        'ours: input': String(total(input)),
        'ours: reused prefix': String(oursReused),
        'naive: input': String(total(naiveInput)),
        'naive: reused prefix': String(naiveReused),
        'messages kept': String(result.messages.length),
      });
    }
    ours = input;
    naive = naiveInput;
    engine.set(message(reply));
    await engine.save();
    all.push(reply);
  }
  console.log(
    `\nScripted ${turns}-turn conversation, maxInputTokens ${maxInputTokens}, o200k counts, ${freshEngine ? 'a new engine per call (nothing kept between calls)' : 'one engine for the whole conversation'} (sample rows):`,
  );
  printTable(rows);
  const share = (reused: number, of: number) => `${((100 * reused) / of).toFixed(1)}%`;
  console.log(
    `\nReusable prefix share of input tokens (calls 2–${turns}): ours ${share(sums.oursReused, sums.oursTotal)}, naive ${share(sums.naiveReused, sums.naiveTotal)}`,
  );
  console.log(
    freshEngine
      ? "Engine's own prefix report: none (a new engine has no previous call to compare with)."
      : `Engine's own prefix report agrees: ${share(engineReport.reused, engineReport.total)} (reusedTokens / totalTokens).`,
  );
  console.log(
    `Calls over budget: ${sums.overBudget} of ${turns}; largest input ${maxTotal} tokens (engine count).`,
  );
}

async function warmResolveCost(size: number): Promise<Record<string, string>> {
  const store = new InMemoryContextStore();
  const chatId = `warm-${size}`;
  await seedChat(store, chatId, 'bench', size);
  const engine = new ContextEngine({
    store,
    chatId,
    userId: 'bench',
    renderer,
    tokenizer: o200kTokenizer,
  });
  engine.set(role('You are helpful.'), hint('Keep answers short.'));
  const budget = { maxInputTokens };
  await engine.resolve();
  const coldStart = performance.now();
  await engine.resolve({ budget });
  const firstBudgeted = performance.now() - coldStart;
  const rounds = 200;
  const plain: number[] = [];
  const budgeted: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    let start = performance.now();
    await engine.resolve();
    plain.push(performance.now() - start);
    start = performance.now();
    await engine.resolve({ budget });
    budgeted.push(performance.now() - start);
  }
  // A turn at a time: one new message pending each round (validated and, with a budget, counted
  // once), rounds alternating between unbudgeted and budgeted.
  const plainNew: number[] = [];
  const budgetedNew: number[] = [];
  for (let round = 0; round < 100; round += 1) {
    engine.set(user(`one more question ${round}`));
    const start = performance.now();
    if (round % 2 === 0) {
      await engine.resolve();
      plainNew.push(performance.now() - start);
    } else {
      await engine.resolve({ budget });
      budgetedNew.push(performance.now() - start);
    }
    await engine.save();
  }
  const plainMedian = median(plain);
  const budgetedMedian = median(budgeted);
  return {
    messages: size.toLocaleString('en-US'),
    'unbudgeted warm (ms)': plainMedian.toFixed(3),
    'budgeted warm (ms)': budgetedMedian.toFixed(3),
    'difference (ms)': (budgetedMedian - plainMedian).toFixed(3),
    'budgeted / unbudgeted': (budgetedMedian / plainMedian).toFixed(2),
    '+1 message: unbudgeted (ms)': median(plainNew).toFixed(3),
    '+1 message: budgeted (ms)': median(budgetedNew).toFixed(3),
    'first budgeted (counts all, ms)': firstBudgeted.toFixed(1),
  };
}

await conversation(false);
await conversation(true);
console.log(
  '\nWarm resolve (median): 200 rounds with nothing changed between calls; 50 rounds each with one new pending message; o200k counts:',
);
printTable([await warmResolveCost(1_000), await warmResolveCost(10_000)]);
