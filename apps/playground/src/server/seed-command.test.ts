import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { openBackend } from './open-backend';
import { PACKAGE_DIRECTORY } from './playground-config';
import { runSeedCommand } from './seed-command';

const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-playground-seed-'));

afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** The chat as the store keeps it: its owner, its messages and its branches. */
async function storedChat(path: string, chatId: string) {
  const backend = await openBackend({ kind: 'sqlite', path });
  try {
    const graph = await backend.store.getGraph(chatId);
    return {
      userId: graph.chat.userId,
      messages: graph.nodes.length,
      branches: graph.branches.map((branch) => branch.name).sort(),
    };
  } finally {
    await backend.close();
  }
}

describe('the seed command', () => {
  it('writes a long chat into the store the server would open, and prints the address that opens it', async () => {
    const path = join(directory, 'command.db');
    const environment = { SQLITE_PATH: path, PORT: '5199', PLAYGROUND_USER: 'seeder' };
    // pnpm passes the `--` of `pnpm … seed -- --messages 300` on.
    const lines = await runSeedCommand(['--', '--messages', '300'], environment);
    expect(lines.at(-1)).toBe('http://127.0.0.1:5199/#/chat/long-300');
    expect(lines[0]).toBe(
      `Seeded chat "long-300": 300 messages, a side branch for seeder, in ${path}.`,
    );
    // 300 on main, and a side branch's answer a third of the way in.
    expect(await storedChat(path, 'long-300')).toEqual({
      userId: 'seeder',
      messages: 301,
      branches: ['main', 'main-v2'],
    });
    // Again: a new chat beside the first, never more messages on it.
    const again = await runSeedCommand(['--messages', '300', '--forks', '2'], environment);
    expect(again.at(-1)).toBe('http://127.0.0.1:5199/#/chat/long-300-2');
    expect((await storedChat(path, 'long-300')).messages).toBe(301);
    expect((await storedChat(path, 'long-300-2')).branches).toHaveLength(4);
  });

  it('names a chat when asked, and refuses one that exists', async () => {
    const environment = { SQLITE_PATH: join(directory, 'named.db') };
    const lines = await runSeedCommand(['--messages', '10', '--chat', 'my long chat'], environment);
    expect(lines.at(-1)).toBe('http://127.0.0.1:5173/#/chat/my%20long%20chat');
    await expect(
      runSeedCommand(['--messages', '10', '--chat', 'my long chat'], environment),
    ).rejects.toThrow('A chat "my long chat" already exists in this store; name a new one.');
  });

  it('explains a bad argument with its usage, and refuses the memory store', async () => {
    const environment = { SQLITE_PATH: join(directory, 'refused.db') };
    await expect(runSeedCommand(['--messages', 'many'], environment)).rejects.toThrow(
      /--messages must be a whole number from 1 to 100000, received "many"\.\nUsage: pnpm --filter @ctxgraph\/playground seed -- --messages 2000/,
    );
    await expect(runSeedCommand(['--message', '5'], environment)).rejects.toThrow(
      /Unknown option '--message'[\s\S]*\nUsage: /,
    );
    await expect(runSeedCommand(['--messages', '5'], { STORE: 'memory' })).rejects.toThrow(
      'STORE=memory keeps nothing once this command ends',
    );
  });

  it('runs as the package script the README shows', async () => {
    const scripts = JSON.parse(readFileSync(join(PACKAGE_DIRECTORY, 'package.json'), 'utf8'))
      .scripts as Record<string, string>;
    const path = join(directory, 'script.db');
    // What `pnpm run seed -- --messages 40` runs: the script's line with the arguments after it,
    // the package's bin folder on the PATH.
    const { stdout } = await promisify(execFile)('sh', ['-c', `${scripts.seed} -- --messages 40`], {
      cwd: PACKAGE_DIRECTORY,
      env: {
        ...process.env,
        SQLITE_PATH: path,
        PATH: `${join(PACKAGE_DIRECTORY, 'node_modules', '.bin')}${delimiter}${process.env.PATH}`,
      },
    });
    expect(stdout.trim().split('\n').at(-1)).toBe('http://127.0.0.1:5173/#/chat/long-40');
    expect((await storedChat(path, 'long-40')).messages).toBe(41);
  });
});
