// The runtime-neutral promise of docs/architecture.md, run for real: the built packages, bundled
// as a Cloudflare Worker would bundle them (esbuild with the `workerd`, `worker` and `browser`
// conditions, no Node built-ins, no `nodejs_compat`), run inside workerd through miniflare, and
// must give exactly what the same calls give on Node. Then the PostgreSQL store, from workerd,
// against the test PostgreSQL (DATABASE_URL, or the embedded server the Postgres suites use).
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { build, type Metafile, type Plugin } from 'esbuild';
import { Miniflare } from 'miniflare';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aiMajor, aliasAnchor, majorSpecifier } from '../../ai-major/major.mjs';
import { type PostgresServer, startPostgresServer } from '../../postgres-server.ts';
import { runScenario, type ScenarioResult } from './scenario';

const compatibilityDate = '2026-04-01';

interface Bundle {
  /** The worker's code, one ES module. */
  code: string;
  /** What the bundle leaves to the runtime to provide (`node:*`, `cloudflare:*`). */
  runtimeImports: string[];
  /** The files bundled. */
  inputs: string[];
}

/** The AI SDK major (tooling/ai-major) for esbuild: on AI SDK 6, `ai` is the AI SDK 6 alias. */
const aiMajorPlugin: Plugin = {
  name: 'ctxgraph-ai-major',
  setup(builder) {
    const major = aiMajor();
    builder.onResolve({ filter: /^(ai|@ai-sdk\/(openai|react))(\/|$)/ }, async (args) => {
      const alias = majorSpecifier(args.path, major);
      if (alias === undefined) return undefined;
      const resolved = await builder.resolve(alias, {
        kind: args.kind,
        resolveDir: dirname(aliasAnchor),
      });
      return resolved.errors.length > 0 ? { errors: resolved.errors } : { path: resolved.path };
    });
  },
};

/** Bundles a worker as Wrangler would: esbuild, workerd's conditions, nothing left unresolved. */
async function bundle(entry: string, external: string[] = []): Promise<Bundle> {
  const result = await build({
    entryPoints: [new URL(entry, import.meta.url).pathname],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    external,
    plugins: [aiMajorPlugin],
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const output = result.outputFiles[0];
  if (output === undefined) throw new Error(`esbuild wrote nothing for ${entry}`);
  return {
    code: output.text,
    runtimeImports: runtimeImports(result.metafile),
    inputs: Object.keys(result.metafile.inputs),
  };
}

function runtimeImports(metafile: Metafile): string[] {
  const paths = Object.values(metafile.inputs).flatMap(({ imports }) =>
    imports.filter((item) => item.external === true).map((item) => item.path),
  );
  return [...new Set(paths)].sort();
}

describe('the runtime-neutral packages and the memory store inside workerd', () => {
  let miniflare: Miniflare | undefined;
  let worker: Bundle = { code: '', runtimeImports: [], inputs: [] };

  beforeAll(async () => {
    // No `external` and no `nodejs_compat`: an import of a Node built-in fails the bundle.
    worker = await bundle('./worker.ts');
    miniflare = new Miniflare({
      modules: [{ type: 'ESModule', path: 'worker.js', contents: worker.code }],
      compatibilityDate,
    });
  });
  afterAll(async () => {
    await miniflare?.dispose();
  });

  it('bundles without any Node built-in', () => {
    expect(worker.runtimeImports).toEqual([]);
  });

  it("bundles the AI SDK of the run's major", () => {
    const majors = new Set(
      worker.inputs.flatMap((input) => /\/ai@(\d+)\./.exec(input)?.slice(1) ?? []),
    );
    expect([...majors]).toEqual([aiMajor()]);
  });

  it('resolves under a budget, saves, renders with each renderer and serializes as on Node', async () => {
    if (miniflare === undefined) throw new Error('miniflare did not start');
    const response = await miniflare.dispatchFetch('http://edge.test/');
    const body = (await response.json()) as ScenarioResult | { error: unknown };
    expect('error' in body ? body.error : undefined).toBeUndefined();
    const edge = body as ScenarioResult;
    const node = await runScenario();

    expect(edge).toEqual(node);
    // The scenario did what it says: a cut under the budget, two saves, three renderers.
    expect(edge.saves).toEqual(['a1', 'a6']);
    expect(edge.resolved.messages).toHaveLength(6);
    expect(edge.reread).toHaveLength(12);
    expect(edge.rendered.xml).toContain('<role>');
    expect(edge.rendered.markdown).toContain('recursion');
    expect(edge.rendered.toon).toContain('recursion');
    expect(edge.serialized.roundTripXml).toBe(edge.rendered.xml);
  });
});

// postgres.js ships a Cloudflare build (its `workerd` export condition): TCP through
// `cloudflare:sockets`, and `node:buffer`, `node:events` and `node:stream`, so the worker needs
// the `nodejs_compat` flag. workerd under miniflare lets it reach 127.0.0.1 (Cloudflare's own
// network refuses private addresses: deployed, the database must be public or behind Hyperdrive).
describe('the PostgreSQL store inside workerd (nodejs_compat)', () => {
  let server: PostgresServer | undefined;
  let miniflare: Miniflare | undefined;
  let worker: Bundle = { code: '', runtimeImports: [], inputs: [] };
  const schema = `edge_${randomBytes(6).toString('hex')}`;

  beforeAll(async () => {
    server = await startPostgresServer();
    worker = await bundle('./postgres-worker.ts', ['cloudflare:*', 'node:*']);
    miniflare = new Miniflare({
      modules: [{ type: 'ESModule', path: 'worker.js', contents: worker.code }],
      compatibilityDate,
      compatibilityFlags: ['nodejs_compat'],
      bindings: { DATABASE_URL: server.url, SCHEMA: schema },
    });
  });
  afterAll(async () => {
    await miniflare?.dispose();
    if (server !== undefined) {
      const admin = postgres(server.url, { max: 1, onnotice: () => {} });
      await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => admin.end());
      await server.stop();
    }
  });

  it('needs only cloudflare:sockets and Node built-ins nodejs_compat provides', () => {
    expect(worker.runtimeImports).toEqual([
      'cloudflare:sockets',
      'node:buffer',
      'node:events',
      'node:stream',
    ]);
  });

  it('migrates, saves a turn and reads it back with a fresh engine', async () => {
    if (miniflare === undefined || server === undefined) throw new Error('setup failed');
    const response = await miniflare.dispatchFetch('http://edge.test/');
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.error).toBeUndefined();
    expect(body).toEqual({
      head: 'a1',
      messages: [
        { id: 'q1', role: 'user' },
        { id: 'a1', role: 'assistant' },
      ],
    });
    // Written for real: Node's client sees the turn in the worker's schema.
    const admin = postgres(server.url, { max: 1, onnotice: () => {} });
    try {
      const tables =
        await admin`SELECT table_name FROM information_schema.tables WHERE table_schema = ${schema}`;
      expect(tables.length).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
  });
});

type Fetcher = (url: string, init?: RequestInit) => Promise<Response>;

/** What {@link driveChat} saw: every answer's status and JSON (or stream) as plain JSON. */
interface ChatDrive {
  turn: { status: number; type: string | null; chunks: string[]; text: string };
  messages: Record<string, unknown>;
  edit: { status: number; text: string };
  placed: { status: number; text: string };
  after: Record<string, unknown>;
  versions: { status: number; body: unknown };
  context: { status: number; body: unknown };
  stop: { status: number };
  wrongMethod: { status: number; allow: string | null; body: unknown };
  unknownChat: { status: number; body: unknown };
}

/** The UI message stream of a turn, read to its end: its chunk types and its text. */
async function readTurn(response: Response) {
  const body = await response.text();
  const chunks = body
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)) as { type: string; delta?: string });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    chunks: chunks.map((chunk) => chunk.type),
    text: chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.delta : '')).join(''),
  };
}

/** Drives the chat routes the way a page does, through `fetcher`. */
async function driveChat(fetcher: Fetcher): Promise<ChatDrive> {
  const base = 'http://edge.test/api/chat';
  const headers = { 'x-user': 'ada', 'content-type': 'application/json' };
  const ask = (id: string, text: string) => ({ id, role: 'user', parts: [{ type: 'text', text }] });
  const post = (body: unknown) =>
    fetcher(base, { method: 'POST', headers, body: JSON.stringify(body) });
  const get = async (path: string) => {
    const response = await fetcher(`${base}${path}`, { headers });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const turn = await readTurn(await post({ id: 'edge', messages: [ask('q1', 'Hello edge')] }));
  const messages = (await get('/edge/messages')).body;
  // An edit of the first question (a last-message body: a new version), then a question placed
  // after the first version's reply by its node id (`after`).
  const edit = await readTurn(await post({ id: 'edge', message: ask('q1', 'Hello again') }));
  const nodeIds = messages.nodeIds as Record<string, string>;
  const firstReply = (messages.messages as { id: string }[])[1]?.id as string;
  const placed = await readTurn(
    await post({ id: 'edge', message: ask('q2', 'And then?'), after: nodeIds[firstReply] }),
  );
  const after = (await get('/edge/messages?leaf=q2')).body;
  const versions = await get('/edge/versions/q1');
  // createdAt is the clock's: each runtime has its own.
  const listed = (versions.body.versions as Record<string, unknown>[]).map(
    ({ createdAt: _createdAt, ...version }) => version,
  );
  const context = await get('/edge/context');
  const stop = await fetcher(`${base}/edge/stop`, { method: 'POST', headers });
  const wrong = await fetcher(`${base}/edge/messages`, { method: 'POST', headers, body: '{}' });
  const unknown = await get('/nope/messages');
  return {
    turn,
    messages,
    edit: { status: edit.status, text: edit.text },
    placed: { status: placed.status, text: placed.text },
    after,
    versions: { status: versions.status, body: listed },
    context,
    stop: { status: stop.status },
    wrongMethod: {
      status: wrong.status,
      allow: wrong.headers.get('allow'),
      body: await wrong.json(),
    },
    unknownChat: unknown,
  };
}

// The route handler of @ctxgraph/ai-sdk as the Worker's `fetch` (the whole reference chat
// contract), over the memory store and a deterministic model: driven inside workerd as a page
// drives it, and the same module on Node must answer the same.
describe('the chat route handler as a Worker’s fetch inside workerd', () => {
  let miniflare: Miniflare | undefined;
  let worker: Bundle = { code: '', runtimeImports: [], inputs: [] };

  beforeAll(async () => {
    worker = await bundle('./chat-worker.ts');
    miniflare = new Miniflare({
      modules: [{ type: 'ESModule', path: 'worker.js', contents: worker.code }],
      compatibilityDate,
    });
  });
  afterAll(async () => {
    await miniflare?.dispose();
  });

  it('bundles the handler, the AI SDK and the memory store without any Node built-in', () => {
    expect(worker.runtimeImports).toEqual([]);
    expect(worker.inputs.some((input) => input.includes('ai-sdk/dist'))).toBe(true);
  });

  it('serves a turn, the messages with their versions, versions, the gauge, stop, a 405 and a 404 as on Node', async () => {
    const running = miniflare;
    if (running === undefined) throw new Error('miniflare did not start');
    const edge = await driveChat(
      (url, init) => running.dispatchFetch(url, init as never) as unknown as Promise<Response>,
    );
    const { default: onNode } = await import('./chat-worker');
    const node = await driveChat((url, init) => onNode.fetch(new Request(url, init)));
    expect(edge).toEqual(node);

    expect(edge.turn).toMatchObject({
      status: 200,
      type: 'text/event-stream',
      text: 'You said: Hello edge',
    });
    expect(edge.turn.chunks.at(0)).toBe('start');
    expect(edge.turn.chunks.at(-1)).toBe('finish');
    const stored = edge.messages.messages as { id: string; role: string }[];
    expect(stored.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(edge.messages).toMatchObject({
      outcomes: {},
      nodeIds: { q1: 'q1', [stored[1]?.id as string]: stored[1]?.id },
      versions: {},
    });
    expect(edge.edit).toEqual({ status: 200, text: 'You said: Hello again' });
    expect(edge.placed).toEqual({ status: 200, text: 'You said: And then?' });
    // q2 follows the first version's reply, though the edit was written after it.
    const path = edge.after.messages as { id: string }[];
    expect(path.map((message) => message.id)).toEqual(['q1', stored[1]?.id, 'q2']);
    expect(edge.after.versions).toMatchObject({ q1: { index: 0 } });
    expect((edge.after.versions as Record<string, { nodes: unknown[] }>).q1?.nodes).toHaveLength(2);
    expect(edge.versions.status).toBe(200);
    expect(edge.versions.body).toHaveLength(2);
    expect(edge.context.status).toBe(200);
    expect(edge.context.body).toMatchObject({ maxInputTokens: null, usage: { calls: 3 } });
    expect(edge.stop).toEqual({ status: 204 });
    expect(edge.wrongMethod).toMatchObject({ status: 405, allow: 'GET' });
    expect(edge.unknownChat.status).toBe(404);
  });
});
