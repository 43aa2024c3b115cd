// Renders the shared 200-fragment context with each renderer and prints bytes, o200k tokens and
// median render time. It prints figures; it asserts nothing.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ContextFragment, ContextRenderer, RenderNode } from '@ctxgraph/fragments-core';
import { walkFragments } from '@ctxgraph/fragments-core';
import { MarkdownRenderer } from '@ctxgraph/renderer-markdown';
import { ToonRenderer } from '@ctxgraph/renderer-toon';
import { XmlRenderer } from '@ctxgraph/renderer-xml';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';

// The `shared` folder sits beside the repository checkout (/work/shared next to /work/main).
const fixtureUrl = new URL('../../../shared/fixtures/context-200.json', import.meta.url);
const fixturePath = fileURLToPath(fixtureUrl);

/** Token counts of the most widely used library of this kind on this exact context. */
const reference: Record<string, number> = {
  xml: 7795,
  markdown: 6528,
  toon: 5774,
  'bare text': 4311,
};

const runs = 1000;
const warmup = 300;

function loadContext(): ContextFragment[] | undefined {
  if (!existsSync(fixturePath)) {
    console.error(`render-bench: fixture not found at ${fixturePath}.`);
    console.error(
      'It lives in the shared folder beside the checkout (shared/fixtures/context-200.json); nothing to measure.',
    );
    return undefined;
  }
  return JSON.parse(readFileSync(fixturePath, 'utf8')) as ContextFragment[];
}

function leaves(nodes: readonly RenderNode[], into: string[] = []): string[] {
  for (const node of nodes) {
    if (node.kind === 'scalar') into.push(String(node.value));
    else leaves(node.children, into);
  }
  return into;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

// Two timings per format: the first render of a context by a new renderer, and a repeated render
// of the same context by the same renderer (what every resolve() of a conversation does; a
// renderer may remember its last output, as ToonRenderer does).
function measure(
  createRenderer: () => ContextRenderer,
  context: ContextFragment[],
): { output: string; firstMs: number; repeatedMs: number } {
  let output = '';
  const renderer = createRenderer();
  for (let index = 0; index < warmup; index++) output = createRenderer().render(context);
  const first: number[] = [];
  for (let index = 0; index < runs; index++) {
    const fresh = createRenderer();
    const start = performance.now();
    output = fresh.render(context);
    first.push(performance.now() - start);
  }
  const repeated: number[] = [];
  for (let index = 0; index < runs; index++) {
    const start = performance.now();
    renderer.render(context);
    repeated.push(performance.now() - start);
  }
  return { output, firstMs: median(first), repeatedMs: median(repeated) };
}

// Structure check for the table: how many leaf texts appear verbatim. The fixture's texts hold no
// character any of the three formats escapes, so each must be found as it is.
function leavesFound(output: string, texts: readonly string[]): string {
  return `${texts.filter((text) => output.includes(text)).length}/${texts.length}`;
}

function row(cells: string[]): string {
  const widths = [10, 9, 8, 10, 9, 11, 9, 9];
  return cells
    .map((cell, index) =>
      index === 0 ? cell.padEnd(widths[index]!) : cell.padStart(widths[index]!),
    )
    .join(' ');
}

const context = loadContext();
if (context) {
  const leafTexts = leaves(walkFragments(context));
  const bare = leafTexts.join('\n');
  console.log(
    `context-200.json: ${context.length} top-level fragments, ${leafTexts.length} leaf values; ${runs} timed runs each\n`,
  );
  console.log(
    row(['format', 'bytes', 'tokens', 'reference', 'vs ref', 'first ms', 'repeat ms', 'leaves']),
  );
  const bareTokens = encode(bare).length;
  console.log(
    row([
      'bare text',
      String(Buffer.byteLength(bare)),
      String(bareTokens),
      String(reference['bare text']),
      '',
      '',
      '',
      '',
    ]),
  );
  const factories: Array<() => ContextRenderer> = [
    () => new XmlRenderer(),
    () => new MarkdownRenderer(),
    () => new ToonRenderer(),
  ];
  for (const createRenderer of factories) {
    const renderer = createRenderer();
    const { output, firstMs, repeatedMs } = measure(createRenderer, context);
    const tokens = encode(output).length;
    const referenceTokens = reference[renderer.format]!;
    const change = `${(((tokens - referenceTokens) / referenceTokens) * 100).toFixed(1)}%`;
    console.log(
      row([
        renderer.format,
        String(Buffer.byteLength(output)),
        String(tokens),
        String(referenceTokens),
        change,
        firstMs.toFixed(3),
        repeatedMs.toFixed(3),
        leavesFound(output, leafTexts),
      ]),
    );
  }
  console.log(
    '\nTimes are medians on a shared machine: compare them with each other, not across machines.',
  );
}
