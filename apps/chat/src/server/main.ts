import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chooseModel } from './models';
import { startChatServer } from './start-server';
import { openStore } from './store-from-env';

const packageDirectory = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be a port number, received '${process.env.PORT}'.`);
  }
  const chosen = chooseModel(process.env);
  const chosenStore = await openStore(process.env);
  const { store } = chosenStore;
  const clientDirectory = join(packageDirectory, 'dist', 'client');
  const running = await startChatServer({
    store,
    model: chosen.model,
    port,
    ...(existsSync(join(clientDirectory, 'index.html')) ? { clientDirectory } : {}),
  });
  console.log(`ctxgraph chat app running at ${running.url}`);
  console.log(`  store: ${chosenStore.description}  model: ${chosen.description}`);
  const stop = (): void => {
    running
      .close()
      .then(() => store.close())
      .finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
