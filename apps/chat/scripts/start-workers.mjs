// `start:workers`: the chat app in workerd, locally, with no Cloudflare account: the Worker
// (wrangler.jsonc's `main`) bundled by esbuild and run by miniflare with wrangler.jsonc's
// settings (compatibility date and flags, the Durable Object binding, the static assets).
// Honours PORT (0 picks a free port; default 8787), CHAT_MODEL and MOCK_CHUNK_DELAY_MS as the
// Node app does, and prints its URL the same way. CTXGRAPH_WORKERS_STATE is the folder the
// objects' SQLite is kept in (default .wrangler/state, as `wrangler dev`); CTXGRAPH_CLIENT_DIRECTORY
// the built page's folder (default wrangler.jsonc's `assets.directory`, dist/client).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Log, LogLevel, Miniflare } from 'miniflare';

const appDirectory = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** wrangler.jsonc, read as JSON once its whole-line comments are dropped. */
function readWranglerConfig() {
  const text = readFileSync(join(appDirectory, 'wrangler.jsonc'), 'utf8');
  return JSON.parse(
    text
      .split('\n')
      .filter((line) => !/^\s*\/\//.test(line))
      .join('\n'),
  );
}

/** The Worker's variables from this process's environment (the names the Node app reads). */
function workerVariables() {
  const variables = {};
  for (const name of [
    'CHAT_MODEL',
    'MOCK_CHUNK_DELAY_MS',
    'OPENAI_API_KEY',
    'AI_GATEWAY_API_KEY',
    'ANTHROPIC_API_KEY',
  ]) {
    const value = process.env[name];
    if (value !== undefined && value !== '') variables[name] = value;
  }
  return variables;
}

async function main() {
  const port = Number(process.env.PORT ?? 8787);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be a port number, received '${process.env.PORT}'.`);
  }
  const delay = process.env.MOCK_CHUNK_DELAY_MS;
  if (delay !== undefined && !(Number.isFinite(Number(delay)) && Number(delay) >= 0)) {
    throw new Error(`MOCK_CHUNK_DELAY_MS must be a non-negative number, received '${delay}'.`);
  }
  const config = readWranglerConfig();
  const assets = resolve(
    appDirectory,
    process.env.CTXGRAPH_CLIENT_DIRECTORY || config.assets.directory,
  );
  if (!existsSync(join(assets, 'index.html'))) {
    throw new Error(
      `The page is not built (no ${join(assets, 'index.html')}): run \`npx -y pnpm@10.34.9 --filter @ctxgraph/chat-app build\` first.`,
    );
  }
  const out = mkdtempSync(join(tmpdir(), 'ctxgraph-chat-worker-'));
  const scriptPath = join(out, 'worker.js');
  await build({
    entryPoints: [resolve(appDirectory, config.main)],
    outfile: scriptPath,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    external: ['cloudflare:*', 'node:*'],
    logLevel: 'warning',
  });
  const state = resolve(
    process.env.CTXGRAPH_WORKERS_STATE ?? join(appDirectory, '.wrangler', 'state'),
  );
  const sqliteClasses = new Set(config.migrations.flatMap((step) => step.new_sqlite_classes ?? []));
  const miniflare = new Miniflare({
    name: config.name,
    modules: true,
    modulesRoot: out,
    scriptPath,
    // Offline: the placeholder `request.cf`, not the one fetched from Cloudflare.
    cf: false,
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags,
    bindings: workerVariables(),
    durableObjects: Object.fromEntries(
      config.durable_objects.bindings.map((binding) => [
        binding.name,
        { className: binding.class_name, useSQLite: sqliteClasses.has(binding.class_name) },
      ]),
    ),
    durableObjectsPersist: join(state, 'durable-objects'),
    assets: { directory: assets, routerConfig: { has_user_worker: true } },
    host: '127.0.0.1',
    port,
    log: new Log(LogLevel.WARN),
  });
  const url = await miniflare.ready;
  console.log(`ctxgraph chat app running at ${url.origin}`);
  const model = process.env.CHAT_MODEL ?? 'mock unless an API key is set';
  console.log(
    `  store: durable objects (workerd, ${state})  model: ${model}${delay === undefined ? '' : ` (mock: ${delay} ms a word)`}`,
  );
  const stop = () => {
    miniflare
      .dispose()
      .finally(() => rmSync(out, { recursive: true, force: true }))
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
