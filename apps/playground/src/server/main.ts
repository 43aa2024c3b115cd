import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_DIRECTORY, readPlaygroundConfig } from './playground-config';
import { startPlayground } from './start-server';

// `node dist/server/main.js` serves the built client from dist/client; `--dev` (the dev script)
// instead runs Vite's dev server in front of the same API.
const development = process.argv.includes('--dev');

async function main(): Promise<void> {
  const config = readPlaygroundConfig(process.env);
  const clientDirectory = join(PACKAGE_DIRECTORY, 'dist', 'client');
  if (development) {
    const { startDevelopmentServer } = await import('./development-server');
    const url = await startDevelopmentServer(config);
    console.log(`ctxgraph playground (dev) running at ${url}`);
    return;
  }
  if (!existsSync(join(clientDirectory, 'index.html'))) {
    console.error(
      `The client is not built (${clientDirectory} has no index.html). Run "pnpm playground" from the repository root, or "pnpm --filter @ctxgraph/playground build" first.`,
    );
    process.exit(1);
  }
  const running = await startPlayground(config, { clientDirectory });
  // Three lines, the URL last: what a person looks for is at the bottom of the terminal.
  console.log(
    `  store: ${running.backend.description.kind} (${running.backend.description.location})`,
  );
  console.log(
    config.model
      ? `  model: ${config.model.modelId}${config.model.baseURL ? ` at ${config.model.baseURL}` : ''}`
      : '  model: none (write assistant replies by hand; set PLAYGROUND_MODEL=echo, or OPENAI_API_KEY or OPENAI_BASE_URL + OPENAI_MODEL)',
  );
  console.log(`ctxgraph playground running at ${running.url}`);
  const stop = () => {
    running.close().finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
