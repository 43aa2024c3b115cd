import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startPlayground } from './start-server';

describe('startPlayground', () => {
  let blocker: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (blocker ? blocker.close(() => resolve()) : resolve()));
    blocker = undefined;
  });

  it('says what to do when the port is taken, and leaves nothing open', async () => {
    const taken = createServer();
    blocker = taken;
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const address = taken.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const config = {
      port,
      host: '127.0.0.1',
      store: { kind: 'memory' } as const,
      model: null,
      defaultUserId: 'tester',
    };
    await expect(startPlayground(config)).rejects.toThrow(
      `Port ${port} on 127.0.0.1 is already in use (is another playground running?). Stop it, or start on another port: PORT=${port + 1} npx -y pnpm@10.34.9 playground`,
    );
  });

  it('serves on a free port and closes cleanly', async () => {
    const running = await startPlayground({
      port: 0,
      host: '127.0.0.1',
      store: { kind: 'memory' },
      model: null,
      defaultUserId: 'tester',
    });
    try {
      const response = await fetch(new URL('api/info', running.url));
      expect(response.status).toBe(200);
      expect(((await response.json()) as { defaultUserId: string }).defaultUserId).toBe('tester');
    } finally {
      await running.close();
    }
  });
});
