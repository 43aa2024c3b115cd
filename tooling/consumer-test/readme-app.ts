// The ai-sdk README's whole app ("A whole app: one server, one page") in the consumer project,
// from the packed packages, on the run's AI SDK major: its `server.ts` and `page.tsx` blocks as
// written, a model module (the README leaves the model to the app: here the AI SDK's mock), both
// files type-checked under `strict`, then the server started with Node (`PORT=0`) and one turn
// sent through the AI SDK's own `DefaultChatTransport` as the page's `useChat` sends it, and read
// back from the messages route. The same two files run in Chromium in
// apps/chat/src/e2e/readme-app.e2e.test.ts.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeRuntime } from '../node-runtime.mjs';
import { root } from '../workspace.mjs';

/** The packages the two files need beside what the project has, as a user adds them. */
export const readmeAppPackages: readonly string[] = [
  '@ctxgraph/store-sqlite',
  '@ctxgraph/react',
  'hono',
  '@hono/node-server',
  'react',
  'react-dom',
];

/** The block fenced as ```<language> <file> in `markdown`, or undefined. */
function readmeFile(markdown: string, language: string, file: string): string | undefined {
  const fence = `\`\`\`${language} ${file}\n`;
  const start = markdown.indexOf(fence);
  if (start === -1) return undefined;
  const body = markdown.slice(start + fence.length);
  const end = body.search(/^```$/m);
  return end === -1 ? undefined : body.slice(0, end);
}

const modelModule = `import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

// The model the README leaves to the app: one that echoes the question.
export const model = new MockLanguageModelV3({
  doStream: async ({ prompt }) => {
    const last = prompt.at(-1);
    const question = last?.role === 'user' && last.content[0]?.type === 'text' ? last.content[0].text : '';
    return {
      stream: simulateReadableStream({
        chunks: [
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: \`You said: \${question}\` },
          { type: 'text-end', id: 't' },
          {
            type: 'finish',
            finishReason: { unified: 'stop', raw: undefined },
            usage: {
              inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
              outputTokens: { total: 3, text: 3, reasoning: undefined },
            },
          },
        ],
      }),
    };
  },
});
`;

const turnProgram = `import { DefaultChatTransport, readUIMessageStream } from 'ai';

const [url, text] = process.argv.slice(2);
const transport = new DefaultChatTransport({ api: url + '/api/chat' });
const stream = await transport.sendMessages({
  chatId: 'readme-chat',
  trigger: 'submit-message',
  messageId: undefined,
  messages: [{ id: 'q1', role: 'user', parts: [{ type: 'text', text }] }],
  abortSignal: undefined,
});
let reply;
for await (const message of readUIMessageStream({ stream })) reply = message;
console.log((reply?.parts ?? []).flatMap((part) => (part.type === 'text' ? [part.text] : [])).join(''));
`;

/** Writes, type-checks and runs the README's app in `project`; returns the problems found. */
export async function runReadmeApp(options: {
  readonly project: string;
  readonly runtime: NodeRuntime;
  /** The project's tsc and tsx (its own installs). */
  readonly tsc: string;
  readonly tsx: string;
}): Promise<string[]> {
  const { project, runtime } = options;
  const problems: string[] = [];
  const readme = readFileSync(join(root, 'packages', 'ai-sdk', 'README.md'), 'utf8');
  const server = readmeFile(readme, 'ts', 'server.ts');
  const page = readmeFile(readme, 'tsx', 'page.tsx');
  if (server === undefined || page === undefined) {
    return ['packages/ai-sdk/README.md lacks its ```ts server.ts or ```tsx page.tsx block.'];
  }
  writeFileSync(join(project, 'server.ts'), server);
  writeFileSync(join(project, 'page.tsx'), page);
  writeFileSync(join(project, 'model.ts'), modelModule);
  writeFileSync(join(project, 'turn.mjs'), turnProgram);
  const check = spawnSync(
    runtime.node,
    [
      options.tsc,
      '--noEmit',
      '--strict',
      '--target',
      'es2022',
      '--lib',
      'es2023,dom,dom.iterable',
      '--module',
      'preserve',
      '--moduleResolution',
      'bundler',
      '--jsx',
      'react-jsx',
      '--types',
      'node',
      '--skipLibCheck',
      '--ignoreConfig',
      'server.ts',
      'page.tsx',
    ],
    { cwd: project, encoding: 'utf8' },
  );
  if (check.status !== 0) {
    problems.push(
      `the README's server.ts and page.tsx do not type-check:\n${check.stdout}${check.stderr}`,
    );
    return problems;
  }
  console.log("ok   the ai-sdk README's server.ts and page.tsx type-check (strict)");
  const child = spawn(runtime.node, ['--import', options.tsx, 'server.ts'], {
    cwd: project,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const read = (chunk: Buffer): void => {
        output += chunk.toString('utf8');
        const match = /Listening on (http:\/\/localhost:\d+)/.exec(output);
        if (match?.[1] !== undefined) resolve(match[1]);
      };
      child.stdout?.on('data', read);
      child.stderr?.on('data', read);
      child.once('exit', (code) => reject(new Error(`server.ts exited (${code}):\n${output}`)));
    });
    const turn = spawnSync(runtime.node, ['turn.mjs', url, 'Hello from the README'], {
      cwd: project,
      encoding: 'utf8',
    });
    if (turn.status !== 0 || turn.stdout.trim() !== 'You said: Hello from the README') {
      problems.push(`a turn to the README's server failed:\n${turn.stdout}${turn.stderr}`);
      return problems;
    }
    const stored = (await (await fetch(`${url}/api/chat/readme-chat/messages`)).json()) as {
      messages?: unknown[];
      nodeIds?: Record<string, string>;
    };
    if (stored.messages?.length !== 2 || Object.keys(stored.nodeIds ?? {}).length !== 2) {
      problems.push(`the README's server stored ${JSON.stringify(stored)}`);
    } else {
      console.log("ok   the ai-sdk README's server answers a useChat turn and stores it");
    }
  } catch (error) {
    problems.push((error as Error).message);
  } finally {
    child.kill();
  }
  return problems;
}
