// The reference chat app copied out of the repository, as a user starts from it: apps/chat's files
// (tracked and new, not ignored: no node_modules, no dist) in a folder of their own beside the
// release rehearsal's tarballs, its `workspace:` dependencies pointed at those tarballs (plus the
// ones they need, as the root README's install line lists them), then `npm install`,
// `npm run build` and `npm start` as its package.json says, on the Node its `ai` asks for. One
// turn over HTTP through the AI SDK's own client (DefaultChatTransport and readUIMessageStream,
// from the copy's `ai`), the mock model answering; then the stored conversation is read back and
// the server stopped with SIGTERM.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import type { NodeRuntime } from '../node-runtime.mjs';
import { type PackedPackage, withSiblings } from '../release-rehearsal.mjs';
import { checkoutFiles, root } from '../workspace.mjs';
import {
  ctxgraphNotFromTarballs,
  installedCopies,
  npm,
  npmCli,
  npmProjectEnvironment,
  usePrebuilds,
} from './npm-project.ts';

/** Where the copy is made, and what it is made with. */
export interface CopiedChatAppOptions {
  /** A folder of its own, beside `tarballs` (the manifest points at them by relative path). */
  readonly folder: string;
  /** The folder holding the packed packages. */
  readonly tarballs: string;
  readonly packages: readonly PackedPackage[];
  readonly runtime: NodeRuntime;
  /** better-sqlite3's addon for `runtime` (betterSqlitePrebuilds). */
  readonly prebuilds: string;
}

const dependencyFields = ['dependencies', 'devDependencies', 'peerDependencies'] as const;
const question = 'Hello from a copy';

/** The client side of one turn, run in the copy with its own `ai`: prints `{ id, text }`. */
const turnProgram = `import { DefaultChatTransport, readUIMessageStream } from 'ai';

const [url, chatId, text] = process.argv.slice(2);
const transport = new DefaultChatTransport({ api: url + '/api/chat' });
const stream = await transport.sendMessages({
  chatId,
  trigger: 'submit-message',
  messageId: undefined,
  messages: [{ id: 'question-1', role: 'user', parts: [{ type: 'text', text }] }],
  abortSignal: undefined,
});
let reply;
for await (const message of readUIMessageStream({ stream })) reply = message;
const replyText = (reply?.parts ?? []).flatMap((part) => (part.type === 'text' ? [part.text] : []));
console.log(JSON.stringify({ id: reply?.id, text: replyText.join('') }));
`;

/** apps/chat's package.json with each `@ctxgraph/*` dependency a `file:` spec of its tarball. */
function copiedManifest(options: CopiedChatAppOptions): Record<string, unknown> {
  const source = join(root, 'apps', 'chat');
  const manifest = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8'));
  const byName = new Map(options.packages.map((item) => [item.name, item]));
  const tarballSpec = (name: string): string => {
    const tarball = byName.get(name)?.tarball;
    if (tarball === undefined) throw new Error(`${name} was not packed for the copied app.`);
    return `file:${relative(options.folder, join(options.tarballs, basename(tarball)))}`;
  };
  const named: string[] = [];
  for (const field of dependencyFields) {
    for (const name of Object.keys(manifest[field] ?? {})) {
      if (!name.startsWith('@ctxgraph/')) continue;
      manifest[field][name] = tarballSpec(name);
      named.push(name);
    }
  }
  // What those need and the manifest does not name (the engine's @ctxgraph/serialization): npm
  // would look for it on the registry.
  for (const name of withSiblings(named, options.packages)) {
    if (!named.includes(name)) manifest.dependencies[name] = tarballSpec(name);
  }
  return manifest;
}

/** Resolves with the URL the server prints when it is ready; rejects if it exits first. */
function serverUrl(server: ChildProcess, output: { text: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const read = (chunk: Buffer): void => {
      output.text += chunk.toString('utf8');
      const match = /running at (http:\/\/[^\s]+)/.exec(output.text);
      if (match?.[1] !== undefined) resolve(match[1]);
    };
    server.stdout?.on('data', read);
    server.stderr?.on('data', read);
    server.once('exit', (code) =>
      reject(new Error(`npm start exited (${code}) before printing its URL:\n${output.text}`)),
    );
  });
}

/** Sends `signal` to process group `group` (nothing when it has no process left). */
function signalGroup(group: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-group, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * Copies, installs, builds and starts the chat app (see the file's header) and runs one turn;
 * returns the problems found, one sentence each (none: it ran as a copy).
 */
export async function runCopiedChatApp(options: CopiedChatAppOptions): Promise<string[]> {
  const { folder, runtime } = options;
  const source = join(root, 'apps', 'chat');
  console.log(`\n=== apps/chat copied out, on Node ${runtime.version}: ${folder}`);
  for (const path of checkoutFiles(source)) {
    mkdirSync(dirname(join(folder, path)), { recursive: true });
    copyFileSync(join(source, path), join(folder, path));
  }
  writeFileSync(
    join(folder, 'package.json'),
    `${JSON.stringify(copiedManifest(options), null, 2)}\n`,
  );
  usePrebuilds(folder, options.prebuilds);
  const problems: string[] = [];
  console.log('npm install');
  npm(runtime, ['install'], folder);
  for (const found of ctxgraphNotFromTarballs(folder)) {
    problems.push(`a @ctxgraph package did not come from its tarball: ${found}`);
  }
  console.log('npm run build');
  npm(runtime, ['run', 'build'], folder);

  // The app installs @ai-sdk/react (useChat) beside its `ai`: one copy, which both use.
  const copies = installedCopies(folder, 'ai');
  if (copies.length !== 1) {
    problems.push(
      `the copied app has ${copies.length} copies of ai: ${copies.map((copy) => `${copy.version} in ${copy.folder}`).join(', ')}`,
    );
  }

  console.log('npm start');
  const environment = npmProjectEnvironment(runtime, {
    PORT: '0',
    CHAT_MODEL: 'mock',
    MOCK_CHUNK_DELAY_MS: '0',
    CTXGRAPH_SQLITE: join(folder, 'chat.db'),
  });
  for (const key of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'AI_GATEWAY_API_KEY'])
    delete environment[key];
  // A process group of its own: npm does not pass SIGTERM on to the server it starts, so the
  // stop goes to the group (npm and the server), as a terminal's Ctrl-C does. The server has
  // exited when the output pipe it shares with npm closes: a process's files close when it exits
  // (an exited process the system has not reaped yet still counts as existing).
  const server = spawn(runtime.node, [npmCli(), 'start'], {
    cwd: folder,
    env: environment,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const group = server.pid;
  if (group === undefined) throw new Error('npm start did not start.');
  const closed = new Promise<true>((resolve) => server.once('close', () => resolve(true)));
  const output = { text: '' };
  try {
    const url = await serverUrl(server, output);
    writeFileSync(join(folder, 'turn.mjs'), turnProgram);
    const turn = spawnSync(runtime.node, ['turn.mjs', url, 'copied-chat', question], {
      cwd: folder,
      encoding: 'utf8',
    });
    if (turn.status !== 0) {
      problems.push(`the turn through DefaultChatTransport failed:\n${turn.stdout}${turn.stderr}`);
      return problems;
    }
    const streamed = JSON.parse(turn.stdout) as { id?: string; text: string };
    if (streamed.text !== `You said: ${question}`) {
      problems.push(`the streamed reply was ${JSON.stringify(streamed.text)}`);
    }
    const response = await fetch(`${url}/api/chat/copied-chat/messages`);
    const stored = (await response.json()) as {
      messages?: { id: string; parts: { type: string; text?: string }[] }[];
    };
    const texts = (stored.messages ?? []).map((message) =>
      message.parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join(''),
    );
    if (JSON.stringify(texts) !== JSON.stringify([question, `You said: ${question}`])) {
      problems.push(`the stored conversation was ${JSON.stringify(texts)}`);
    } else if (stored.messages?.[1]?.id !== streamed.id) {
      problems.push(
        `the reply was stored as ${stored.messages?.[1]?.id}, streamed as ${streamed.id}`,
      );
    } else {
      console.log(`ok   one turn over HTTP: "${streamed.text}", stored under the streamed id`);
    }
  } finally {
    signalGroup(group, 'SIGTERM');
    // A bound for a server that does not stop, not a measure of how fast it does.
    let bound: NodeJS.Timeout | undefined;
    const stuck = new Promise<false>((resolve) => {
      bound = setTimeout(() => resolve(false), 60_000);
    });
    if (!(await Promise.race([closed, stuck]))) {
      problems.push(`the server did not exit on SIGTERM:\n${output.text}`);
      signalGroup(group, 'SIGKILL');
    }
    clearTimeout(bound);
  }
  if (problems.length === 0 && copies.length === 1) {
    console.log(
      `ok   the copy installs, builds and starts as its package.json says, one ai (${copies[0]?.version})`,
    );
  }
  return problems;
}
