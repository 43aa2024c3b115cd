import { parseArgs } from 'node:util';
import { hidePassword } from './open-backend';
import { readPlaygroundConfig } from './playground-config';
import { seedLongChat } from './seed-long-chat';

/** How the `seed` command is called, for its usage line and its errors. */
const USAGE =
  'Usage: pnpm --filter @ctxgraph/playground seed -- --messages 2000 [--forks 12] [--chat <id>]';

/**
 * The `seed` command: writes a long chat into the playground's store (the one the server would
 * open with the same environment: STORE, SQLITE_PATH, DATABASE_URL; its owner PLAYGROUND_USER)
 * and answers the lines to print, the last one the address that opens it. Throws with the usage
 * on an argument it cannot use, and refuses the memory store, which would be gone when the
 * command ends.
 *
 * @example
 * ```ts
 * const lines = await runSeedCommand(['--messages', '2000'], process.env);
 * ```
 */
export async function runSeedCommand(
  argv: readonly string[],
  environment: Record<string, string | undefined>,
): Promise<string[]> {
  let values: { messages?: string; forks?: string; chat?: string };
  try {
    ({ values } = parseArgs({
      // `pnpm … seed -- --messages 2000` may pass the separator on.
      args: argv.filter((argument) => argument !== '--'),
      options: {
        messages: { type: 'string' },
        forks: { type: 'string' },
        chat: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
  const count = wholeNumber('--messages', values.messages ?? '2000', 1);
  const forks = wholeNumber('--forks', values.forks ?? '0', 0);
  const config = readPlaygroundConfig(environment);
  if (config.store.kind === 'memory') {
    throw new Error(
      'STORE=memory keeps nothing once this command ends: seed the SQLite file (the default) or Postgres (DATABASE_URL) the playground opens.',
    );
  }
  const { chatId } = await seedLongChat(config.store, count, {
    forks,
    userId: config.defaultUserId,
    ...(values.chat === undefined ? {} : { chatId: values.chat }),
  });
  const address = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}/#/chat/${encodeURIComponent(chatId)}`;
  return [
    `Seeded chat "${chatId}": ${count.toLocaleString('en-US')} messages${forks > 0 ? `, ${forks + 1} side branches` : ', a side branch'} for ${config.defaultUserId}, in ${config.store.kind === 'sqlite' ? config.store.path : hidePassword(config.store.url)}.`,
    'Start the playground with the same settings (pnpm playground), then open:',
    address,
  ];
}

function wholeNumber(name: string, text: string, least: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < least || value > 100_000) {
    throw new Error(
      `${name} must be a whole number from ${least} to 100000, received "${text}".\n${USAGE}`,
    );
  }
  return value;
}
