// The calls the edge test makes, as one function: the test runs it in Node and, bundled into a
// worker, inside workerd, and compares the two results. Everything it returns is plain JSON.
import { assistant, toModelMessages, user } from '@ctxgraph/codecs';
import { ContextEngine } from '@ctxgraph/engine';
import { type ContextFragment, guardrail, hint, role, term } from '@ctxgraph/fragments-core';
import { MarkdownRenderer } from '@ctxgraph/renderer-markdown';
import { ToonRenderer } from '@ctxgraph/renderer-toon';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { fromFragment, toFragment } from '@ctxgraph/serialization';
import { InMemoryContextStore } from '@ctxgraph/store-memory';
import { o200kTokenizer } from '@ctxgraph/tokenizer-o200k';

/** What {@link runScenario} returns: the same JSON in every runtime the packages run on. */
export interface ScenarioResult {
  /** The context rendered by each renderer. */
  rendered: { xml: string; markdown: string; toon: string };
  /** The non-message fragments to JSON (`fromFragment`) and back (`toFragment`), rendered again. */
  serialized: { json: unknown[]; roundTripXml: string };
  /** The heads the two saves reported. */
  saves: (string | undefined)[];
  /** A budgeted `resolve({ budget, format: 'model' })` after the saves. */
  resolved: { systemPrompt: string; messages: unknown; system: unknown; budget: unknown };
  /** The branch's messages as a fresh engine reads them back from the store, as model messages. */
  reread: unknown;
  /** `o200k_base` counts, the tokenizer's data included in the bundle. */
  tokens: number[];
}

const context = (): ContextFragment[] => [
  role('You are a patient tutor who answers in plain words.'),
  hint('Keep responses brief.'),
  term('recursion', 'A function that calls itself on a smaller input.'),
  guardrail({ rule: 'Never invent citations.', reason: 'Students quote them.' }),
];

/**
 * Saves a short conversation in an in-memory store, resolves it under a token budget small
 * enough to leave the oldest turns out, renders the context with each renderer and round-trips
 * it through the serializer.
 */
export async function runScenario(): Promise<ScenarioResult> {
  const store = new InMemoryContextStore();
  const options = { store, chatId: 'edge-chat', userId: 'edge-user', tokenizer: o200kTokenizer };
  const engine = new ContextEngine({ ...options, renderer: new XmlRenderer() });
  engine.set(...context());

  const saves: (string | undefined)[] = [];
  engine.set(user('What is recursion?', { id: 'q1' }));
  engine.set(assistant('A function calling itself, until a base case stops it.', { id: 'a1' }));
  saves.push((await engine.save()).headMessageId);
  for (let turn = 2; turn <= 6; turn++) {
    engine.set(
      user(`Give example number ${turn} of recursion, in one long sentence.`, { id: `q${turn}` }),
    );
    engine.set(
      assistant(
        `Example ${turn}: ${'a directory walk that visits every folder inside a folder, '.repeat(turn)}`,
        {
          id: `a${turn}`,
        },
      ),
    );
  }
  saves.push((await engine.save()).headMessageId);

  const resolved = await engine.resolve({ budget: { maxInputTokens: 400 }, format: 'model' });

  const fresh = new ContextEngine({ ...options, renderer: new MarkdownRenderer() });
  const { messages: rereadMessages } = await fresh.resolve();

  const json = context().map((fragment) => fromFragment(fragment));
  const roundTrip = json.map((value) => toFragment(value));
  return JSON.parse(
    JSON.stringify({
      rendered: {
        xml: engine.render(),
        markdown: engine.render(new MarkdownRenderer()),
        toon: engine.render(new ToonRenderer()),
      },
      serialized: { json, roundTripXml: new XmlRenderer().render(roundTrip) },
      saves,
      resolved: {
        systemPrompt: resolved.systemPrompt,
        messages: resolved.messages,
        system: resolved.system,
        budget: resolved.budget,
      },
      reread: await toModelMessages(rereadMessages),
      tokens: [o200kTokenizer.count('Hello, world!'), o200kTokenizer.count(engine.render())],
    }),
  ) as ScenarioResult;
}
